// What the SDKs said they lost before sending: their `client_report` items (Sentry's discard
// reasons and data categories: a log envelope evicted for space is its lines and bytes), summed per
// (reason, category) over the newest items — the same bounded read as the release-health page — for
// the health page and `GET /api/0/projects/<org>/<project>/client-reports/`.
import Foundation
import FaultlineProtocol

struct ClientReportTally {
    struct Key: Hashable, Comparable {
        let reason: String
        let category: String
        static func < (a: Key, b: Key) -> Bool { (a.reason, a.category) < (b.reason, b.category) }
    }

    private(set) var quantities: [Key: Int64] = [:]
    /// Reports read (each one item).
    private(set) var reports = 0

    /// One stored `client_report` payload. A client's numbers are taken as non-negative integers
    /// below 2^48 each and summed saturating; names longer than 64 bytes or with control characters
    /// are not names Sentry's SDKs send, and are skipped.
    mutating func add(_ payload: Data) {
        guard let v = try? JSONParser.parse(payload) else { return }
        reports += 1
        for d in v["discarded_events"]?.arrayValue ?? [] {
            guard let reason = d["reason"]?.stringValue, let category = d["category"]?.stringValue, Self.isName(reason), Self.isName(category),
                let n = d["quantity"]?.int64Value, n > 0
            else { continue }
            let key = Key(reason: reason, category: category)
            quantities[key] = SessionCounting.saturatingAdd(quantities[key] ?? 0, min(n, 1 << 48))
        }
    }

    static func isName(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 64 && !s.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The project's tally over the newest reports (received at or after `since`), and whether
    /// older ones were left unread.
    static func read(_ queries: WebQueries, projectID: Int64, since: Double?) throws -> (tally: ClientReportTally, partial: Bool) {
        var tally = ClientReportTally()
        var reachedSince = false
        let stoppedAt = try queries.scanItems(
            projectID: projectID, type: "client_report", before: nil, maxItems: HealthPage.scanLimit, maxBytes: HealthPage.scanBytes,
            stop: { reachedSince }
        ) { _, received, payload in
            if let since, received < since { reachedSince = true; return }
            tally.add(payload)
        }
        return (tally, stoppedAt != nil && !reachedSince)
    }

    /// `GET /api/0/projects/<org>/<project>/client-reports/?since=`: `[{reason, category, quantity}]`.
    static func handle(_ r: HTTPRequest, project slug: String, store: any Store, queries: WebQueries) throws -> HTTPResponse {
        let request: ProjectPageRequest
        switch try ProjectPageRequest.read(r, project: slug, store: store) {
        case .success(let read): request = read
        case .failure(let refusal): return refusal.response
        }
        let (tally, partial) = try read(queries, projectID: request.project.id, since: request.since)
        var response = HTTPResponse.json(
            .array(
                tally.quantities.keys.sorted().map { k in
                    ["reason": .string(k.reason), "category": .string(k.category), "quantity": .int(tally.quantities[k] ?? 0)]
                }))
        if partial { response.headers.append(("X-Faultline-Partial", "true")) }
        return response
    }
}
