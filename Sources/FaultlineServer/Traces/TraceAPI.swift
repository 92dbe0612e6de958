// The trace read API (below /api/0/, server token): recent traces of a project, one trace as a
// tree of spans with durations and status, and the link from an occurrence to its trace.
import Foundation
import FaultlineProtocol

struct TraceAPI {
    let store: any Store
    /// Nil: this server keeps no traces.
    let traces: (any TraceStore)?

    /// `projects/<org>/<project>/traces[/<trace id>]`; nil when the path is not ours.
    func handle(_ r: HTTPRequest, _ p: [String], limit: Int, offset: Int) throws -> HTTPResponse? {
        guard p.count >= 4, p[0] == "projects", p[3] == "traces", p.count <= 5 else { return nil }
        guard let project = try store.project(idOrSlug: p[2]) else { return .detail(404, "no project '\(p[2])'") }
        guard let traces else { return .detail(404, "this store keeps no traces") }
        if p.count == 4 {
            let list = try traces.recentTransactions(projectID: project.id, name: r.query["name"], status: r.query["status"], limit: limit, offset: offset)
            return .json(
                .array(
                    list.map { t in
                        [
                            "trace_id": .string(t.traceID), "span_id": .string(t.spanID), "transaction": .string(t.name),
                            "op": t.op.map { .string($0) } ?? .null, "status": .string(t.status ?? "ok"), "start": .double(t.start), "end": .double(t.end),
                            "duration_ms": .double(Self.ms(t.end - t.start)), "span_count": .int(t.spanCount), "received": .double(t.received),
                            "url": .string(Self.path(p[1], project.slug, t.traceID))
                        ]
                    }))
        }
        guard let traceID = TransactionDecoder.hexID(p[4], 32) else { return .detail(400, "a trace id is 32 hex digits") }
        let stored = try traces.trace(projectID: project.id, traceID: traceID)
        guard !stored.spans.isEmpty || !stored.occurrences.isEmpty else { return .detail(404, "no such trace") }
        var tree = Self.tree(traceID: traceID, spans: stored.spans, occurrences: stored.occurrences, org: p[1], project: project.slug)
        if stored.cut { tree["cut"] = .bool(true) }
        return .json(tree)
    }

    static func ms(_ seconds: Double) -> Double { (seconds * 1_000_000).rounded() / 1000 }

    /// Where a trace is read: named by the project's slug, as the other API URLs are.
    static func path(_ org: String, _ project: String, _ traceID: String) -> String {
        "/api/0/projects/\(org)/\(project)/traces/\(traceID)/"
    }

    /// Spans nest under their parent; a span whose parent was never stored (a remote caller that
    /// does not report here, or a process that crashed before sending) is a root. Every stored
    /// span appears exactly once: one in a parent cycle (A under B under A, which a client can
    /// send), or below the depth cap, is shown as a root of its own with `detached` saying why.
    /// `withData: false` leaves out each span's `data` (the trace page does not show it, and
    /// parsing it is most of the cost of a large trace).
    static func tree(
        traceID: String, spans: [SpanRecord], occurrences: [TracedOccurrence], org: String, project: String, withData: Bool = true
    ) -> JSONValue {
        let ids = Set(spans.map(\.spanID))
        var children: [String: [SpanRecord]] = [:]
        var roots: [SpanRecord] = []
        for s in spans {
            if let p = s.parentSpanID, ids.contains(p), p != s.spanID { children[p, default: []].append(s) } else { roots.append(s) }
        }
        let occurrencesBySpan = Dictionary(grouping: occurrences) { $0.spanID ?? "" }
        var seen = Set<String>()
        func node(_ s: SpanRecord, depth: Int, detached: String? = nil) -> JSONValue {
            seen.insert(s.spanID)
            var o: [String: JSONValue] = [
                "span_id": .string(s.spanID), "parent_span_id": s.parentSpanID.map { .string($0) } ?? .null,
                "name": .string(s.name), "op": s.op.map { .string($0) } ?? .null, "status": .string(s.status ?? "ok"),
                "start": .double(s.start), "end": .double(s.end), "duration_ms": .double(ms(s.end - s.start)),
                "transaction": .bool(s.isTransaction)
            ]
            if withData, let d = s.data, let v = try? JSONValue.parse(Data(d.utf8)) { o["data"] = v }
            if let occ = occurrencesBySpan[s.spanID] { o["occurrences"] = .array(occ.map { .string($0.eventID) }) }
            if let detached { o["detached"] = .string(detached) }
            // Depth-capped: a client could send a parent chain thousands deep.
            let kids = (children[s.spanID] ?? []).sorted { $0.start < $1.start }.filter { !seen.contains($0.spanID) }
            o["children"] = .array(depth < 256 ? kids.map { node($0, depth: depth + 1) } : [])
            return .object(o)
        }
        var rootNodes = roots.sorted { $0.start < $1.start }.map { node($0, depth: 0) }
        // What no root reached: cycles, and what hung below the depth cap. The earliest unshown
        // span starts the next subtree, until every span is shown.
        let unshown = spans.filter { !seen.contains($0.spanID) }.sorted { ($0.start, $0.spanID) < ($1.start, $1.spanID) }
        let byID = Dictionary(spans.map { ($0.spanID, $0) }, uniquingKeysWith: { a, _ in a })
        var reachesARoot: [String: Bool] = [:]  // memoised along each parent chain walked
        func chainEndsAtARoot(_ s: SpanRecord) -> Bool {
            var path: [String] = [], onPath = Set<String>(), current = s, verdict = true
            while true {
                if let known = reachesARoot[current.spanID] { verdict = known; break }
                if onPath.contains(current.spanID) { verdict = false; break }
                path.append(current.spanID)
                onPath.insert(current.spanID)
                guard let p = current.parentSpanID, p != current.spanID, let parent = byID[p] else { break }
                current = parent
            }
            for id in path { reachesARoot[id] = verdict }
            return verdict
        }
        for next in unshown where !seen.contains(next.spanID) {
            let why = chainEndsAtARoot(next) ? "deeper than 256 levels below its root" : "its parent chain is a cycle"
            rootNodes.append(node(next, depth: 0, detached: why))
        }
        let start = spans.map(\.start).min() ?? 0, end = spans.map(\.end).max() ?? 0
        return [
            "trace_id": .string(traceID), "span_count": .int(Int64(spans.count)), "start": .double(start), "end": .double(end),
            "duration_ms": .double(ms(end - start)), "roots": .array(rootNodes),
            "occurrences": .array(
                occurrences.map { o in
                    [
                        "event_id": .string(o.eventID), "span_id": o.spanID.map { .string($0) } ?? .null,
                        "span_stored": .bool(o.spanID.map(ids.contains) ?? false),
                        "url": .string("/api/0/projects/\(org)/\(project)/events/\(o.eventID)/")
                    ]
                })
        ]
    }

    /// What an occurrence shows of its trace: the ids and where the trace is read.
    static func link(event: JSONValue, org: String, project: String) -> JSONValue {
        guard let t = TransactionIngest.traceContext(of: event) else { return .null }
        return ["trace_id": .string(t.traceID), "span_id": t.spanID.map { .string($0) } ?? .null, "url": .string(path(org, project, t.traceID))]
    }
}
