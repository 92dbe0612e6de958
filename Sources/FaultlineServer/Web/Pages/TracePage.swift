// /ui/projects/<slug>/traces/<trace id>: one trace as a waterfall. Spans nest under their parent
// across processes (each process's transaction is a span of the tree: `TraceAPI.tree`, which also
// shows every span once when parents form a cycle or a chain too deep), each with its duration
// and a bar drawn in inline SVG on the trace's time axis (no script, no inline style). Errors and
// crashes linked to the trace sit under the span they happened in and link to their issue.
// A trace holds at most TraceLimits.maxSpansPerTrace spans; the page draws the first `shownSpans`
// rows of the tree and says how many more there are.
import Foundation
import FaultlineProtocol

struct TracePage {
    let ctx: WebContext
    let project: ProjectRecord
    let traceIDText: String
    /// Rows drawn; the rest are counted.
    static let shownSpans = 2000
    /// Indentation levels drawn (deeper spans indent no further; their depth is in the title).
    static let shownDepth = 24

    /// One row of the waterfall: a tree node in depth-first order.
    struct Row {
        var node: JSONValue
        var depth: Int
    }

    func render() throws -> HTTPResponse {
        guard let traces = ctx.stores.traces else { return WebUI.notFound("this store keeps no traces") }
        guard let traceID = TransactionDecoder.hexID(traceIDText, 32) else { return WebUI.notFound("a trace id is 32 hex digits") }
        let stored = try traces.trace(projectID: project.id, traceID: traceID)
        guard !stored.spans.isEmpty || !stored.occurrences.isEmpty else { return WebUI.notFound("no such trace") }
        let tree = TraceAPI.tree(
            traceID: traceID, spans: stored.spans, occurrences: stored.occurrences, org: "faultline", project: project.slug, withData: false)
        let issues = try ctx.queries.occurrenceIssues(stored.occurrences.map(\.occurrenceID))
        let byEvent = Dictionary(stored.occurrences.map { ($0.eventID, $0) }, uniquingKeysWith: { a, _ in a })
        let slug = HTML.q(project.slug)

        var rows: [Row] = []
        var total = 0
        func walk(_ n: JSONValue, _ depth: Int) {
            total += 1
            if rows.count < Self.shownSpans { rows.append(Row(node: n, depth: depth)) }
            for c in n["children"]?.arrayValue ?? [] { walk(c, depth + 1) }
        }
        for r in tree["roots"]?.arrayValue ?? [] { walk(r, 0) }

        let start = tree["start"]?.doubleValue ?? 0, end = tree["end"]?.doubleValue ?? 0
        let span = max(end - start, 1e-6)
        var body = "<h1>Trace <code>\(HTML.esc(traceID))</code></h1>"
        body += "<p class=\"muted\">\(total) spans · \(TracesPage.duration(end - start)) · started \(HTML.time(start))"
        body += " · <a href=\"/ui/projects/\(slug)/logs?trace=\(HTML.q(traceID))\">logs of this trace</a>"
        body += " · <a href=\"/ui/projects/\(slug)/traces\">all transactions</a></p>"
        if stored.cut {
            body += "<p class=\"muted\">This trace holds more than one view reads: the earliest \(TraceLimits.maxSpansPerTrace) spans are shown.</p>"
        }

        func occurrenceLinks(_ o: TracedOccurrence) -> String {
            let issue = issues[o.occurrenceID]
            guard let id = issue?.issueID else {
                return "<li class=\"lvl-error\">event <code>\(HTML.esc(o.eventID))</code> <span class=\"muted\">(not grouped yet)</span></li>"
            }
            return
                "<li class=\"lvl-error\"><a href=\"/ui/issues/\(id)?event=\(o.occurrenceID)\">\(HTML.esc(HTML.clip(issue?.title ?? "issue \(id)", 160)))</a> <span class=\"muted\">event \(HTML.esc(String(o.eventID.prefix(12))))</span></li>"
        }
        let spanIDs = Set(stored.spans.map(\.spanID))
        let unplaced = stored.occurrences.filter { !($0.spanID.map(spanIDs.contains) ?? false) }
        if !unplaced.isEmpty {
            body += "<h2>Errors and crashes on no stored span</h2><ul class=\"occurrences\">" + unplaced.map(occurrenceLinks).joined() + "</ul>"
        }

        body += "<h2>Spans</h2><table class=\"waterfall\"><thead><tr><th>Span</th><th class=\"num\">Duration</th><th>Timeline</th></tr></thead><tbody>"
        for row in rows {
            let n = row.node
            let s = n["start"]?.doubleValue ?? start, e = n["end"]?.doubleValue ?? s
            let status = n["status"]?.stringValue ?? "ok"
            let isTransaction = n["transaction"]?.boolValue == true
            let placed = (n["occurrences"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { byEvent[$0] } }
            var cls = isTransaction ? "tx" : "span"
            if status != "ok" || !placed.isEmpty { cls += " err" }
            body += "<tr class=\"\(cls)\" id=\"span-\(HTML.esc(n["span_id"]?.stringValue ?? ""))\">"
            body += "<td class=\"sd\(min(row.depth, Self.shownDepth))\" title=\"depth \(row.depth)\">"
            if let op = n["op"]?.stringValue { body += "<span class=\"tag\">\(HTML.esc(HTML.clip(op, 40)))</span>" }
            body += "<span class=\"sname\">\(HTML.esc(HTML.clip(n["name"]?.stringValue ?? "", 200)))</span>"
            if isTransaction { body += " <span class=\"tag\">transaction</span>" }
            if status != "ok" { body += " <span class=\"tag unsym\">\(HTML.esc(status))</span>" }
            if let why = n["detached"]?.stringValue { body += " <span class=\"muted\">(shown apart: \(HTML.esc(why)))</span>" }
            if !placed.isEmpty { body += "<ul class=\"occurrences\">" + placed.map(occurrenceLinks).joined() + "</ul>" }
            body += "</td><td class=\"num\">\(TracesPage.duration(e - s))</td><td class=\"bar\">\(Self.bar(s - start, e - s, of: span, cls))</td></tr>"
        }
        body += "</tbody></table>"
        if total > rows.count {
            body += "<p class=\"muted\">\(total - rows.count) more spans are not drawn; the API returns them all "
            body += "(<code>/api/0/projects/…/\(HTML.esc(project.slug))/traces/\(HTML.esc(traceID))/</code>).</p>"
        }
        return ctx.layout("Trace \(traceID.prefix(8))", body, project: project)
    }

    /// A span's bar on the trace's time axis: 1000 units wide, stretched to the cell. Numbers only.
    static func bar(_ offset: Double, _ length: Double, of total: Double, _ cls: String) -> String {
        let x = min(max(offset / total * 1000, 0), 1000)
        let w = min(max(length / total * 1000, 2), 1000 - min(x, 998))
        let fill = cls.contains("err") ? "err" : cls.hasPrefix("tx") ? "tx" : "ok"
        return "<svg class=\"wf\" viewBox=\"0 0 1000 10\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"span timeline\"><rect class=\"\(fill)\" "
            + String(format: "x=\"%.1f\" y=\"1\" width=\"%.1f\" height=\"8\"", x, w) + "></rect></svg>"
    }
}
