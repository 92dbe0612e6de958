// What the web pages read and change, in SQL over the SQLite store. Kept out of the `Store`
// protocol on purpose: these are presentation queries (keyset pages, per-day counts, status),
// and a second store implementation would bring its own. Web-only state lives in `web_*`
// tables created here with IF NOT EXISTS, so existing data directories need no migration.
import Foundation
import FaultlineProtocol

/// Filters and order of the issues list; everything here comes from the query string.
struct IssueQuery {
    enum Sort: String, CaseIterable { case lastSeen = "last_seen", firstSeen = "first_seen", count }
    var sort: Sort = .lastSeen
    var status: String = "unresolved"   // unresolved | resolved | all
    var release: String = ""
    var environment: String = ""
    var text: String = ""
    /// Keyset cursor: the sort value and id of the last row of the previous page.
    var after: (value: Double, id: Int64)?
    var limit = 50
}

struct IssueRow {
    var issue: IssueRecord
    var status: String
    var installs: Int64
    var perDay: [Int64]
    var sortValue: Double
}

struct OccurrenceRow {
    var id: Int64
    var eventID: String
    var timestamp: Double
    var release: String?
    var installID: String?
}

struct WebUploadInfo {
    var tokenName: String
    var uploaded: Double
}

struct WebUser {
    var name: String
    var salt: Data
    var hash: Data
}

final class WebQueries: @unchecked Sendable {
    let store: SQLiteStore
    /// Days the issues list's sparkline covers.
    static let sparkDays = 14

    /// Per-issue sparkline and installs, reused while the issue's count, last seen and the day
    /// are unchanged: any new, moved or merged occurrence changes the count or last seen (backfill
    /// and merges recompute both), so a hit is never stale. Saves a scan of a big issue's
    /// occurrences on every list view.
    private struct StatsKey: Equatable { var count: Int64; var lastSeen: Double; var day: Int64 }
    private struct IssueStats { var key: StatsKey; var perDay: [Int64]; var installs: Int64 }
    private let statsLock = NSLock()
    private var statsCache: [Int64: IssueStats] = [:]

    init(store: SQLiteStore) throws {
        self.store = store
        try store.writer.sync { c in
            try c.exec("""
            CREATE TABLE IF NOT EXISTS web_issue_status(
                issue_id INTEGER PRIMARY KEY, status TEXT NOT NULL, changed REAL NOT NULL);
            CREATE TABLE IF NOT EXISTS web_upload_tokens(
                build_id TEXT PRIMARY KEY, token_name TEXT NOT NULL, uploaded REAL NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS web_users(
                name TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL, created REAL NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS web_stack_envs(
                environment TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(environment, stack_key)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS web_state(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            -- Per-issue sparkline and installs-affected read only this index (covering), never the event blobs.
            CREATE INDEX IF NOT EXISTS web_occurrences_issue_time ON occurrences(issue_id, timestamp, install_id);
            CREATE INDEX IF NOT EXISTS web_issues_project_seen ON issues(project_id, last_seen, id);
            CREATE INDEX IF NOT EXISTS web_items_type_id ON items(project_id, type, id);
            """)
        }
    }

    // MARK: Issues list

    func issues(projectID: Int64, _ q: IssueQuery, now: Double = Date().timeIntervalSince1970) throws -> [IssueRow] {
        let sortColumn: String
        switch q.sort {
        case .lastSeen: sortColumn = "i.last_seen"
        case .firstSeen: sortColumn = "i.first_seen"
        case .count: sortColumn = "i.count"
        }
        var sql = """
            SELECT i.id, coalesce(s.status, 'unresolved'), \(sortColumn) FROM issues i LEFT JOIN web_issue_status s ON s.issue_id = i.id
            WHERE i.project_id = ? AND i.merged_into IS NULL AND i.count > 0
            """
        var args: [SQLValue] = [.int(projectID)]
        switch q.status {
        case "resolved": sql += " AND s.status = 'resolved'"
        case "unresolved": sql += " AND coalesce(s.status, 'unresolved') = 'unresolved'"
        default: break
        }
        if !q.release.isEmpty {
            sql += " AND i.id IN (SELECT issue_id FROM issue_releases WHERE release = ?)"
            args.append(.text(q.release))
        }
        if !q.environment.isEmpty {
            sql += " AND i.id IN (SELECT o.issue_id FROM web_stack_envs e JOIN occurrences o ON o.stack_key = e.stack_key WHERE e.environment = ?)"
            args.append(.text(q.environment))
        }
        if !q.text.isEmpty {
            sql += " AND (instr(lower(i.title), lower(?)) > 0 OR instr(lower(i.culprit), lower(?)) > 0)"
            args.append(.text(q.text)); args.append(.text(q.text))
        }
        if let after = q.after {
            sql += " AND (\(sortColumn) < ? OR (\(sortColumn) = ? AND i.id < ?))"
            args += [.double(after.value), .double(after.value), .int(after.id)]
        }
        sql += " ORDER BY \(sortColumn) DESC, i.id DESC LIMIT ?"
        args.append(.int(Int64(q.limit)))
        let dayNow = Int64(now / 86400)
        let since = Double(dayNow - Int64(Self.sparkDays) + 1) * 86400
        return try store.read { c in
            var heads: [(Int64, String, Double)] = []
            try c.query(sql, args) { heads.append(($0.int(0), $0.text(1) ?? "unresolved", $0.double(2))) }
            var rows: [IssueRow] = []
            for (id, status, sortValue) in heads {
                var issue: IssueRecord?
                try c.query("\(SQLiteStore.issueColumns) WHERE id = ?", .int(id)) { r in
                    issue = IssueRecord(id: r.int(0), projectID: r.int(1), fingerprint: r.text(2) ?? "", title: r.text(3) ?? "", culprit: r.text(4) ?? "",
                                        firstSeen: r.double(5), lastSeen: r.double(6), count: r.int(7), releases: [], symbolicated: r.int(8) != 0,
                                        mergedInto: r.isNull(9) ? nil : r.int(9))
                }
                guard var i = issue else { continue }
                try c.query("SELECT release FROM issue_releases WHERE issue_id = ? ORDER BY release LIMIT 6", .int(id)) { i.releases.append($0.text(0) ?? "") }
                let key = StatsKey(count: i.count, lastSeen: i.lastSeen, day: dayNow)
                statsLock.lock(); let cached = statsCache[id]; statsLock.unlock()
                var perDay = [Int64](repeating: 0, count: Self.sparkDays)
                var installs: Int64 = 0
                if let cached, cached.key == key {
                    (perDay, installs) = (cached.perDay, cached.installs)
                } else {
                    try c.query("SELECT CAST(timestamp / 86400 AS INTEGER), count(*) FROM occurrences WHERE issue_id = ? AND timestamp >= ? GROUP BY 1",
                                .int(id), .double(since)) { r in
                        let idx = Int(r.int(0) - (dayNow - Int64(Self.sparkDays) + 1))
                        if idx >= 0 && idx < perDay.count { perDay[idx] = r.int(1) }
                    }
                    try c.query("SELECT count(DISTINCT install_id) FROM occurrences WHERE issue_id = ?", .int(id)) { installs = $0.int(0) }
                    statsLock.lock()
                    if statsCache.count > 50_000 { statsCache.removeAll() }
                    statsCache[id] = IssueStats(key: key, perDay: perDay, installs: installs)
                    statsLock.unlock()
                }
                rows.append(IssueRow(issue: i, status: status, installs: installs, perDay: perDay, sortValue: sortValue))
            }
            return rows
        }
    }

    /// Releases and environments seen in a project, for the filter menus.
    func releases(projectID: Int64) throws -> [String] {
        try store.read { c in
            var out: [String] = []
            try c.query("SELECT DISTINCT r.release FROM issue_releases r JOIN issues i ON i.id = r.issue_id WHERE i.project_id = ? ORDER BY 1 DESC LIMIT 200",
                        .int(projectID)) { out.append($0.text(0) ?? "") }
            return out
        }
    }

    func environments() throws -> [String] {
        try store.read { c in
            var out: [String] = []
            try c.query("SELECT DISTINCT environment FROM web_stack_envs ORDER BY 1 LIMIT 100") { out.append($0.text(0) ?? "") }
            return out
        }
    }

    func status(issueID: Int64) throws -> String {
        try store.read { c in
            var s = "unresolved"
            try c.query("SELECT status FROM web_issue_status WHERE issue_id = ?", .int(issueID)) { s = $0.text(0) ?? s }
            return s
        }
    }

    func installs(issueID: Int64) throws -> Int64 {
        try store.read { c in
            var n: Int64 = 0
            try c.query("SELECT count(DISTINCT install_id) FROM occurrences WHERE issue_id = ?", .int(issueID)) { n = $0.int(0) }
            return n
        }
    }

    /// First release an issue was seen in (by its earliest occurrence).
    func firstRelease(issueID: Int64) throws -> String? {
        try store.read { c in
            var r: String?
            try c.query("SELECT release FROM occurrences WHERE issue_id = ? AND release IS NOT NULL ORDER BY timestamp LIMIT 1", .int(issueID)) { r = $0.text(0) }
            return r
        }
    }

    // MARK: Occurrences

    /// Newest first, keyset on id (`before`), without reading the event blobs.
    func occurrences(issueID: Int64, before: Int64?, limit: Int) throws -> [OccurrenceRow] {
        try store.read { c in
            var out: [OccurrenceRow] = []
            try c.query("SELECT id, event_id, timestamp, release, install_id FROM occurrences WHERE issue_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
                        .int(issueID), .int(before ?? Int64.max), .int(Int64(limit))) { r in
                out.append(OccurrenceRow(id: r.int(0), eventID: r.text(1) ?? "", timestamp: r.double(2), release: r.text(3), installID: r.text(4)))
            }
            return out
        }
    }

    // MARK: Actions (each one transaction on the writer)

    func setStatus(issueID: Int64, _ status: String) throws {
        try store.writer.sync { c in
            try c.run("INSERT INTO web_issue_status(issue_id, status, changed) VALUES(?, ?, ?) ON CONFLICT(issue_id) DO UPDATE SET status = excluded.status, changed = excluded.changed",
                      .int(issueID), .text(status), .double(Date().timeIntervalSince1970))
        }
    }

    /// Moves every occurrence of `source` into `target` and marks `source` merged (its id keeps
    /// resolving to `target`, as after a backfill merge). Both must be live issues of one project.
    func merge(_ source: Int64, into target: Int64) throws {
        try IssueMerger.merge(source, into: target, in: store)
    }

    // MARK: Debug files

    func recordUploader(buildID: String, tokenName: String) throws {
        try store.writer.sync { c in
            try c.run("INSERT INTO web_upload_tokens(build_id, token_name, uploaded) VALUES(?, ?, ?) ON CONFLICT DO NOTHING",
                      .text(buildID), .text(tokenName), .double(Date().timeIntervalSince1970))
        }
    }

    func uploaders() throws -> [String: WebUploadInfo] {
        try store.read { c in
            var out: [String: WebUploadInfo] = [:]
            try c.query("SELECT build_id, token_name, uploaded FROM web_upload_tokens") { out[$0.text(0) ?? ""] = WebUploadInfo(tokenName: $0.text(1) ?? "", uploaded: $0.double(2)) }
            return out
        }
    }

    func tokenName(token: String) throws -> String? {
        try store.read { c in
            var n: String?
            try c.query("SELECT name FROM server_tokens WHERE hash = ?", .text(SHA256Hash.hex(Data(token.utf8)))) { n = $0.text(0) }
            return n
        }
    }

    /// Issues whose stored stacks go through a build-id (what a debug file makes readable).
    func issues(referencing buildID: String, limit: Int) throws -> [(id: Int64, title: String, symbolicated: Bool)] {
        try store.read { c in
            var out: [(Int64, String, Bool)] = []
            try c.query("""
                SELECT i.id, i.title, i.symbolicated FROM issues i WHERE i.merged_into IS NULL AND i.id IN (
                  SELECT o.issue_id FROM stack_modules m JOIN occurrences o ON o.stack_key = m.stack_key WHERE m.build_id = ?)
                ORDER BY i.last_seen DESC LIMIT ?
                """, .text(buildID), .int(Int64(limit))) { out.append(($0.int(0), $0.text(1) ?? "", $0.int(2) != 0)) }
            return out
        }
    }

    // MARK: Items (logs, sessions)

    /// Newest items of one type, keyset on id; payloads as stored.
    func items(projectID: Int64, type: String, before: Int64?, limit: Int) throws -> [(id: Int64, received: Double, payload: Data)] {
        try store.read { c in
            var out: [(Int64, Double, Data)] = []
            try c.query("SELECT id, received, payload FROM items WHERE project_id = ? AND type = ? AND id < ? ORDER BY id DESC LIMIT ?",
                        .int(projectID), .text(type), .int(before ?? Int64.max), .int(Int64(limit))) { out.append(($0.int(0), $0.double(1), $0.blob(2))) }
            return out
        }
    }

    // MARK: Users

    func user(_ name: String) throws -> WebUser? {
        try store.read { c in
            var u: WebUser?
            try c.query("SELECT name, salt, hash FROM web_users WHERE name = ?", .text(name)) { u = WebUser(name: $0.text(0) ?? "", salt: $0.blob(1), hash: $0.blob(2)) }
            return u
        }
    }

    func setUser(_ u: WebUser) throws {
        try store.writer.sync { c in
            try c.run("INSERT OR REPLACE INTO web_users(name, salt, hash, created) VALUES(?, ?, ?, ?)",
                      .text(u.name), .blob(u.salt), .blob(u.hash), .double(Date().timeIntervalSince1970))
        }
    }

    func users() throws -> [String] {
        try store.read { c in
            var out: [String] = []
            try c.query("SELECT name FROM web_users ORDER BY name") { out.append($0.text(0) ?? "") }
            return out
        }
    }

    // MARK: Environment index

    /// Records the environment of occurrences grouped since the last call (bounded batch), per
    /// distinct stack: stacks never change issue independently of their occurrences, so
    /// (environment, stack) answers "issues seen in environment X" across backfills and merges.
    /// Returns how many occurrences it looked at.
    @discardableResult
    func indexEnvironments(batch: Int = 2000) throws -> Int {
        let last: Int64 = try store.read { c in
            var v: Int64 = 0
            try c.query("SELECT value FROM web_state WHERE key = 'env_indexed'") { v = $0.int(0) }
            return v
        }
        let rows: [(Int64, String?, Data)] = try store.read { c in
            var out: [(Int64, String?, Data)] = []
            try c.query("SELECT id, stack_key, event FROM occurrences WHERE id > ? AND processed = 1 ORDER BY id LIMIT ?", .int(last), .int(Int64(batch))) {
                out.append(($0.int(0), $0.text(1), $0.blob(2)))
            }
            return out
        }
        guard let maxID = rows.last?.0 else { return 0 }
        var pairs = Set<[String]>()
        for (_, key, blob) in rows {
            // Only `environment` is built: a full tree per event cost an eighth of the server's CPU
            // during an ingest storm (perf, tools/bench-ingest).
            guard let key, let event = try? StoredEvent.decode(blob, keeping: ["environment"]) else { continue }
            pairs.insert([event["environment"]?.stringValue ?? "production", key])
        }
        try store.writer.sync { c in
            for p in pairs {
                try c.run("INSERT INTO web_stack_envs(environment, stack_key) VALUES(?, ?) ON CONFLICT DO NOTHING", .text(String(p[0].prefix(200))), .text(p[1]))
            }
            try c.run("INSERT INTO web_state(key, value) VALUES('env_indexed', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", .int(maxID))
        }
        return rows.count
    }
}
