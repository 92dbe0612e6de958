// GET /api/0/projects/<org>/<project>/logs/?q&level&release&trace&since&cursor&limit: the `log`
// items' lines as JSON, newest item first, with the logs page's filters (`LogsPage.Filter`: text
// and `key:value` terms in `q`) and `since` (seconds since the epoch or RFC 3339). It reads what
// the page reads — `WebQueries.scanItems`, at most `LogsPage.itemsPerPage` items and
// `LogsPage.bytesPerPage` bytes per request — and stops after the item that fills `limit` lines,
// so a page may hold fewer lines than asked (older ones are behind the `Link`) but never costs
// more. The cursor is an item id: a page never splits an item's lines.
import Foundation
import FaultlineProtocol

struct LogsAPI {
    let store: any Store
    let queries: WebQueries

    func handle(_ r: HTTPRequest, project slug: String) throws -> HTTPResponse {
        let request: ProjectPageRequest
        switch try ProjectPageRequest.read(r, project: slug, store: store) {
        case .success(let read): request = read
        case .failure(let refusal): return refusal.response
        }
        let (project, page, since) = (request.project, request.page, request.since)
        var before: Int64?
        if let c = page.cursor {
            guard let id = Int64(c) else { return KeysetPage.KeysetError().response }
            before = id
        }
        let q = r.query
        let filter = LogsPage.Filter(
            level: q["level"] ?? "", release: q["release"] ?? "", trace: q["trace"] ?? "", search: LogsPage.Search(String((q["q"] ?? "").prefix(500))))
        var lines: [JSONValue] = []
        var reachedSince = false
        let stoppedAt = try queries.scanItems(
            projectID: project.id, type: "log", before: before, maxItems: LogsPage.itemsPerPage, maxBytes: LogsPage.bytesPerPage,
            stop: { lines.count >= page.limit || reachedSince }
        ) { id, received, payload in
            // Items come newest first: once one was received before `since`, every older one was too.
            if let since, received < since { reachedSince = true }
            for l in LogsPage.lines(payload, received: received) where filter.matches(l) && l.timestamp >= (since ?? -.infinity) {
                lines.append(Self.json(l, item: id, received: received))
            }
        }
        return KeysetPage.response(lines, next: reachedSince ? nil : stoppedAt.map(String.init), request: r)
    }

    static func json(_ l: LogsPage.Line, item: Int64, received: Double) -> JSONValue {
        [
            "item": .string(String(item)), "timestamp": .double(l.timestamp), "received": .double(received), "level": .string(l.level),
            "body": .string(l.body), "release": l.release.isEmpty ? .null : .string(l.release),
            "trace_id": l.trace.isEmpty ? .null : .string(l.trace),
            "attributes": .object(Dictionary(l.attributes.map { ($0.key, JSONValue.string($0.value)) }, uniquingKeysWith: { a, _ in a }))
        ]
    }
}
