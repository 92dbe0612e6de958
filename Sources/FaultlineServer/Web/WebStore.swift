// What the web pages read and write beyond `Store`: presentation queries (keyset pages, per-day
// counts, filter menus) and web-only state (`web_*` tables: issue status, uploaders, users, the
// environment index). Both stores implement it (SQLiteStore+Web, PostgresStore+Web) with the same
// statements where the dialects agree; WebQueries adds caching and the indexer's logic on top.
import Foundation

protocol WebStore: AnyObject, Sendable {
    /// Ids, status and sort value of one page of the issues list (live issues with occurrences).
    func webIssueHeads(projectID: Int64, _ q: IssueQuery) throws -> [(id: Int64, status: String, sortValue: Double)]
    /// Occurrences of the issue per day (days since the epoch) from `since` on.
    func webOccurrencesPerDay(issueID: Int64, since: Double) throws -> [(day: Int64, count: Int64)]
    func webInstalls(issueID: Int64) throws -> Int64
    func webReleases(projectID: Int64) throws -> [String]
    func webEnvironments() throws -> [String]
    func webStatus(issueID: Int64) throws -> String?
    func webFirstRelease(issueID: Int64) throws -> String?
    /// Newest first, keyset on id, without reading the event blobs.
    func webOccurrences(issueID: Int64, before: Int64, limit: Int) throws -> [OccurrenceRow]
    func webSetStatus(issueID: Int64, _ status: String, changed: Double) throws
    /// Keeps the first uploader of a build-id.
    func webRecordUploader(buildID: String, tokenName: String, uploaded: Double) throws
    func webUploaders() throws -> [String: WebUploadInfo]
    func webTokenName(hash: String) throws -> String?
    func webIssues(referencing buildID: String, limit: Int) throws -> [(id: Int64, title: String, symbolicated: Bool)]
    func webItems(projectID: Int64, type: String, before: Int64, limit: Int) throws -> [(id: Int64, received: Double, payload: Data)]
    func webUser(_ name: String) throws -> WebUser?
    /// Adds the user or replaces its password.
    func webSetUser(_ u: WebUser, created: Double) throws
    func webUsers() throws -> [String]
    /// The last occurrence id the environment index has seen (0: none).
    func webEnvironmentIndexPosition() throws -> Int64
    /// Grouped occurrences after `id`, oldest first: id, stack key, compressed event.
    func webGroupedOccurrences(after id: Int64, limit: Int) throws -> [(id: Int64, stackKey: String?, event: Data)]
    /// Adds (environment, stack key) pairs and moves the index position, in one transaction.
    func webIndexEnvironments(_ pairs: [(environment: String, stackKey: String)], position: Int64) throws
}

/// Web-store SQL that is the same text on both stores up to placeholders and one function name.
enum WebSQL {
    enum Dialect {
        case sqlite, postgres
        /// The n-th (1-based) parameter: `?n` in SQLite, `$n` in PostgreSQL.
        func parameter(_ n: Int) -> String { self == .sqlite ? "?\(n)" : "$\(n)" }
        /// The n-th parameter, compared as a double (PostgreSQL would take a parameter compared
        /// with a BIGINT column for a BIGINT and refuse "3.0").
        func doubleParameter(_ n: Int) -> String { self == .sqlite ? "?\(n)" : "$\(n)::double precision" }
        /// Position of a substring, > 0 when found.
        var position: String { self == .sqlite ? "instr" : "strpos" }
    }

    /// The issues-list head query: every value a parameter; only column names chosen from
    /// `IssueQuery.Sort` (never text from the request) go into the SQL.
    static func issueHeads(projectID: Int64, _ q: IssueQuery, _ d: Dialect) -> (sql: String, values: [SQLValue]) {
        let sortColumn: String
        switch q.sort {
        case .lastSeen: sortColumn = "i.last_seen"
        case .firstSeen: sortColumn = "i.first_seen"
        case .count: sortColumn = "i.count"
        }
        var values: [SQLValue] = []
        func p(_ v: SQLValue) -> String {
            values.append(v)
            if case .double = v { return d.doubleParameter(values.count) }
            return d.parameter(values.count)
        }
        var sql = """
            SELECT i.id, coalesce(s.status, 'unresolved'), \(sortColumn) FROM issues i LEFT JOIN web_issue_status s ON s.issue_id = i.id
            WHERE i.project_id = \(p(.int(projectID))) AND i.merged_into IS NULL AND i.count > 0
            """
        switch q.status {
        case "resolved": sql += " AND s.status = 'resolved'"
        case "unresolved": sql += " AND coalesce(s.status, 'unresolved') = 'unresolved'"
        default: break
        }
        if !q.release.isEmpty {
            sql += " AND i.id IN (SELECT issue_id FROM issue_releases WHERE release = \(p(.text(q.release))))"
        }
        if !q.environment.isEmpty {
            sql += " AND i.id IN (SELECT o.issue_id FROM web_stack_envs e JOIN occurrences o ON o.stack_key = e.stack_key WHERE e.environment = \(p(.text(q.environment))))"
        }
        if !q.text.isEmpty {
            let t = p(.text(q.text))
            sql += " AND (\(d.position)(lower(i.title), lower(\(t))) > 0 OR \(d.position)(lower(i.culprit), lower(\(t))) > 0)"
        }
        if let after = q.after {
            let v = p(.double(after.value))
            sql += " AND (\(sortColumn) < \(v) OR (\(sortColumn) = \(v) AND i.id < \(p(.int(after.id)))))"
        }
        sql += " ORDER BY \(sortColumn) DESC, i.id DESC LIMIT \(p(.int(Int64(q.limit))))"
        return (sql, values)
    }

    static let occurrenceColumns = "id, event_id, timestamp, release, install_id"
    static func occurrence(_ r: some SQLRow) -> OccurrenceRow {
        OccurrenceRow(id: r.int(0), eventID: r.text(1) ?? "", timestamp: r.double(2), release: r.text(3), installID: r.text(4))
    }
}
