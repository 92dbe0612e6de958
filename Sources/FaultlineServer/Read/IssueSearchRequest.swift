// Sentry's issue-list parameters on the API (`?query=`, `?status=`, `?sort=`, and the keyset
// `?cursor=`) read into the issues list's own `IssueQuery`, so the API lists and bulk-updates
// exactly what the same search shows on the page. A term the server cannot apply is refused (400),
// never dropped: a bulk update must not widen to every issue.
import Foundation

enum IssueSearchRequest {
    struct Refused: Error {
        let detail: String
        var response: HTTPResponse { .detail(400, detail) }
    }

    /// The request's search. Without `query` or `status` every status is listed (Sentry's API
    /// filters only when asked); `sort` is Sentry's `date` (last seen, the default), `new` (first
    /// seen) or `freq` (occurrences).
    static func query(_ r: HTTPRequest) throws -> IssueQuery {
        var q = IssueQuery()
        q.status = "all"
        if let s = r.query["status"], !s.isEmpty {
            guard let status = IssueStatus(sentry: s) else { throw Refused(detail: "status must be resolved, unresolved, ignored or muted") }
            q.status = status.rawValue
        }
        q.text = String((r.query["query"] ?? "").prefix(1000))
        let unknown = q.applyTerms()
        guard unknown.isEmpty else {
            throw Refused(
                detail:
                    "cannot search for \(unknown.joined(separator: " ")): terms are release:, env:, is:unresolved|resolved|ignored|muted|all, key:value tags, words and \"quoted phrases\" (no negation, has:, assignment or age)"
            )
        }
        // Sentry's environment parameter (its clients send it apart from the query); a query's
        // env: term wins, as it does over the page's menu.
        if q.environment.isEmpty, let environment = r.query["environment"], !environment.isEmpty { q.environment = String(environment.prefix(200)) }
        switch r.query["sort"] ?? "" {
        case "", "date": q.sort = .lastSeen
        case "new": q.sort = .firstSeen
        case "freq": q.sort = .count
        case let other: throw Refused(detail: "cannot sort by '\(other)': sort takes date, new or freq")
        }
        return q
    }

    /// A list position as a keyset cursor's text (the API's `cursor`, the page's `after`/`before`):
    /// the sort value and id of a page's last issue.
    static func cursor(value: Double, id: Int64) -> String { "\(value)_\(id)" }

    static func position(_ cursor: String) -> (value: Double, id: Int64)? {
        let parts = cursor.split(separator: "_")
        guard parts.count == 2, let v = Double(parts[0]), v.isFinite, let id = Int64(parts[1]) else { return nil }
        return (v, id)
    }

    /// The ids and sort values of the issues `q` matches, in its order, one page of `q.limit`.
    static func heads(_ database: any SQLDatabase, projectID: Int64, _ q: IssueQuery) throws -> [(id: Int64, value: Double)] {
        let (sql, args) = WebQueries.issueHeads(projectID: projectID, q, database.dialect)
        return try database.reading { c in try c.rows(sql, args) { ($0.int(0), $0.double(2)) } }
    }
}
