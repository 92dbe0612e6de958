// What the web pages read and change, in SQL written once for both stores (`SQLDatabase`: "?"
// placeholders, the few dialect differences through `SQLDialect`). Kept out of the `Store`
// protocol on purpose: these are presentation queries (keyset pages, per-day counts, status).
// Web-only state lives in `web_*` tables (schema migration 5: SQLiteWebSchema, PostgresWebSchema).
import Foundation
import FaultlineProtocol
import FaultlineHashing
import Synchronization

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

final class WebQueries: Sendable {
    /// Merges go through the core store's issue primitives (`IssueMerger`).
    let store: any Store
    /// The pages' own statements.
    let database: any SQLDatabase
    /// Days the issues list's sparkline covers.
    static let sparkDays = 14

    /// Per-issue sparkline and installs, reused while the issue's count, last seen and the day
    /// are unchanged: any new, moved or merged occurrence changes the count or last seen (backfill
    /// and merges recompute both), so a hit is never stale. Saves a scan of a big issue's
    /// occurrences on every list view.
    private struct StatsKey: Equatable { var count: Int64; var lastSeen: Double; var day: Int64 }
    private struct IssueStats { var key: StatsKey; var perDay: [Int64]; var installs: Int64 }
    private let statsCache = Mutex<[Int64: IssueStats]>([:])
    /// The issue page's per-issue figures (installs affected, the breakdown), kept under the same
    /// rule as the list's stats: reused while the issue's count, last seen and the day are unchanged.
    private let pageFigures = Mutex<[String: (key: StatsKey, value: any Sendable)]>([:])

    init(store: any Store, database: any SQLDatabase) {
        self.store = store
        self.database = database
    }

    // MARK: Issues list

    /// The list's rows in `issueHeads` order: newest sort value first, or nearest the cursor first
    /// when `q.before` pages backwards.
    func issues(projectID: Int64, _ q: IssueQuery, now: Double = Date().timeIntervalSince1970) throws -> [IssueRow] {
        let (sql, args) = Self.issueHeads(projectID: projectID, q, database.dialect)
        let dayNow = Int64(now / 86400)
        let firstDay = dayNow - Int64(Self.sparkDays) + 1
        return try database.reading { c in
            var rows: [IssueRow] = []
            for (id, status, sortValue) in try c.rows(sql, args, { ($0.int(0), $0.text(1) ?? "unresolved", $0.double(2)) }) {
                guard var i = try c.first("SELECT \(IssueRows.columns) FROM issues WHERE id = ?", .int(id), map: IssueRows.issue) else { continue }
                i.releases = try c.rows("SELECT release FROM issue_releases WHERE issue_id = ? ORDER BY release LIMIT 6", .int(id)) { $0.text(0) ?? "" }
                let key = StatsKey(count: i.count, lastSeen: i.lastSeen, day: dayNow)
                let cached = statsCache.withLock { $0[id] }
                var perDay = [Int64](repeating: 0, count: Self.sparkDays)
                var installs: Int64 = 0
                if let cached, cached.key == key {
                    (perDay, installs) = (cached.perDay, cached.installs)
                } else {
                    // Over the issue's rows and those of issues merged into it (IssueGroups).
                    let members = try IssueGroups.membership(c, "issue_id", issue: id)
                    let perDaySQL = "SELECT \(database.dialect.day("timestamp")), count(*) FROM occurrences WHERE \(members.sql) AND timestamp >= ? GROUP BY 1"
                    try c.execute(perDaySQL, members.args + [.double(Double(firstDay) * 86400)]) { r in
                        let idx = Int(r.int(0) - firstDay)
                        if idx >= 0 && idx < perDay.count { perDay[idx] = r.int(1) }
                    }
                    installs = try Self.installs(c, issueID: id)
                    let stats = IssueStats(key: key, perDay: perDay, installs: installs)
                    statsCache.withLock { cache in
                        if cache.count > 50_000 { cache.removeAll() }
                        cache[id] = stats
                    }
                }
                rows.append(IssueRow(issue: i, status: status, installs: installs, perDay: perDay, sortValue: sortValue))
            }
            return rows
        }
    }

    /// `compute()` for this issue, or what it gave for the issue as it is now (same count, last
    /// seen and day: no occurrence added, moved, merged or deleted since). `what` names the figure.
    func memoized<T: Sendable>(_ issue: IssueRecord, _ what: String, now: Double = Date().timeIntervalSince1970, _ compute: () throws -> T) rethrows -> T {
        let key = StatsKey(count: issue.count, lastSeen: issue.lastSeen, day: Int64(now / 86400))
        let name = "\(issue.id) \(what)"
        let cached = pageFigures.withLock { $0[name] }
        if let cached, cached.key == key, let value = cached.value as? T { return value }
        let value = try compute()
        pageFigures.withLock { figures in
            if figures.count > 50_000 { figures.removeAll() }
            figures[name] = (key, value)
        }
        return value
    }

    /// The issues-list head query (ids, status, sort value): every value a parameter; only column names chosen from
    /// `IssueQuery.Sort` (never text from the request) go into the SQL.
    static func issueHeads(projectID: Int64, _ q: IssueQuery, _ d: SQLDialect) -> (sql: String, values: [SQLValue]) {
        let sortColumn: String
        switch q.sort {
        case .lastSeen: sortColumn = "i.last_seen"
        case .firstSeen: sortColumn = "i.first_seen"
        case .count: sortColumn = "i.count"
        case .id: sortColumn = "i.id"
        }
        var values: [SQLValue] = []
        func p(_ v: SQLValue) -> String {
            values.append(v)
            if case .double = v { return "CAST(? AS DOUBLE PRECISION)" }  // PostgreSQL would take BIGINT from i.count
            return "?"
        }
        var sql = """
            SELECT i.id, coalesce(s.status, 'unresolved'), \(sortColumn) FROM issues i LEFT JOIN web_issue_status s ON s.issue_id = i.id
            WHERE i.project_id = \(p(.int(projectID))) AND i.merged_into IS NULL AND i.count > 0
            """
        switch q.status {
        case "resolved": sql += " AND s.status = 'resolved'"
        case "ignored": sql += " AND s.status = 'ignored'"
        case "unresolved": sql += " AND coalesce(s.status, 'unresolved') = 'unresolved'"
        default: break
        }
        if !q.release.isEmpty {
            sql += " AND i.id IN (SELECT issue_id FROM issue_releases WHERE release = \(p(.text(q.release))))"
        }
        // The issues holding a stack a filter names, each as the issue it was merged into if it was.
        // The stacks' issues are found by a loose scan of occurrences_stack(stack_key, project_id,
        // issue_id): per stack, the smallest issue id, then the next larger one, and so on — one
        // index seek per (stack, issue), never one index entry per occurrence (a tag every stack
        // carries would otherwise read every occurrence of the project). `stacks` selects
        // `stack_key`; its parameters come first, as they do in the text.
        func holding(_ stacks: String) -> String {
            let (first, next) = (p(.int(projectID)), p(.int(projectID)))
            return """
                 AND i.id IN (SELECT coalesce(g.merged_into, g.id) FROM issues g WHERE g.id IN (
                WITH RECURSIVE keys(stack_key) AS (\(stacks)),
                hits(stack_key, issue_id) AS (
                    SELECT k.stack_key, (SELECT min(o.issue_id) FROM occurrences o WHERE o.stack_key = k.stack_key AND o.project_id = \(first)) FROM keys k
                    UNION ALL
                    SELECT h.stack_key, (SELECT min(o.issue_id) FROM occurrences o WHERE o.stack_key = h.stack_key AND o.project_id = \(next) AND o.issue_id > h.issue_id)
                    FROM hits h WHERE h.issue_id IS NOT NULL)
                SELECT issue_id FROM hits WHERE issue_id IS NOT NULL))
                """
        }
        if !q.environment.isEmpty {
            sql += holding("SELECT stack_key FROM web_stack_envs WHERE environment = \(p(.text(q.environment)))")
        }
        for tag in q.tags.prefix(IssueQuery.maxTagTerms) {
            sql += holding("SELECT stack_key FROM web_stack_tags WHERE tag_key = \(p(.text(tag.key))) AND tag_value = \(p(.text(tag.value)))")
        }
        if !q.text.isEmpty {
            sql += " AND (\(d.position)(lower(i.title), lower(\(p(.text(q.text))))) > 0 OR \(d.position)(lower(i.culprit), lower(\(p(.text(q.text))))) > 0)"
        }
        if let after = q.after {
            sql += " AND (\(sortColumn) < \(p(.double(after.value))) OR (\(sortColumn) = \(p(.double(after.value))) AND i.id < \(p(.int(after.id)))))"
        }
        // Backwards, the rows nearest the cursor are the ones wanted: ascending, then the page
        // turns them round.
        if let before = q.before {
            sql += " AND (\(sortColumn) > \(p(.double(before.value))) OR (\(sortColumn) = \(p(.double(before.value))) AND i.id > \(p(.int(before.id)))))"
            sql += " ORDER BY \(sortColumn), i.id LIMIT \(p(.int(Int64(q.limit))))"
        } else {
            sql += " ORDER BY \(sortColumn) DESC, i.id DESC LIMIT \(p(.int(Int64(q.limit))))"
        }
        return (sql, values)
    }

    /// A project's live issues, the occurrences grouped into them (from the issues' own counts),
    /// and its session tally: the projects page. Counting the occurrences and items themselves read
    /// an index entry per stored row.
    func projectSummary(projectID: Int64) throws -> (issues: Int64, occurrences: Int64, sessions: Int64, crashed: Int64) {
        try database.reading { c in
            let (issues, occurrences) =
                try c.first(
                    "SELECT count(*), coalesce(sum(count), 0) FROM issues WHERE project_id = ? AND merged_into IS NULL AND count > 0", .int(projectID)
                ) { ($0.int(0), $0.int(1)) } ?? (0, 0)
            let (sessions, crashed) =
                try c.first("SELECT total, crashed FROM session_counts WHERE project_id = ?", .int(projectID)) { ($0.int(0), $0.int(1)) } ?? (0, 0)
            return (issues, occurrences, sessions, crashed)
        }
    }

    /// Releases and environments seen in a project, for the filter menus.
    func releases(projectID: Int64) throws -> [String] {
        try database.reading { c in
            try c.rows(
                "SELECT DISTINCT r.release FROM issue_releases r JOIN issues i ON i.id = r.issue_id WHERE i.project_id = ? ORDER BY 1 DESC LIMIT 200",
                .int(projectID)
            ) { $0.text(0) ?? "" }
        }
    }

    /// The environments the project's issues were seen in (another project's are none of its
    /// business, and would crowd its own out of the menu's 100).
    func environments(projectID: Int64) throws -> [String] {
        try database.reading { c in
            try c.rows(
                """
                SELECT DISTINCT e.environment FROM web_stack_envs e
                WHERE EXISTS (SELECT 1 FROM occurrences o WHERE o.stack_key = e.stack_key AND o.project_id = ?)
                ORDER BY 1 LIMIT 100
                """,
                .int(projectID)
            ) { $0.text(0) ?? "" }
        }
    }

    func status(issueID: Int64) throws -> String {
        try database.reading { c in try c.first("SELECT status FROM web_issue_status WHERE issue_id = ?", .int(issueID)) { $0.text(0) ?? "unresolved" } }
            ?? "unresolved"
    }

    func installs(issueID: Int64) throws -> Int64 { try database.reading { try Self.installs($0, issueID: issueID) } }

    private static func installs(_ c: any SQLSession, issueID: Int64) throws -> Int64 {
        let m = try IssueGroups.membership(c, "issue_id", issue: issueID)
        return try c.rows("SELECT count(DISTINCT install_id) FROM occurrences WHERE \(m.sql)", m.args) { $0.int(0) }.first ?? 0
    }

    /// The most frequent values of each breakdown column (release, environment, OS, install) among
    /// an issue's newest `window` occurrences, with their counts, and the number of occurrences
    /// looked at: the issue page's breakdown, bounded whatever the issue's size. Each column is
    /// counted by SQL over the covering index `web_occurrences_breakdown` (WebBreakdownSchema).
    func breakdown(issueID: Int64, top: Int = 5, window: Int = 10_000) throws -> (values: [BreakdownColumn: [(String?, Int64)]], of: Int64) {
        try database.reading { c in
            let m = try IssueGroups.membership(c, "issue_id", issue: issueID)
            func recent(_ column: String) -> String { "SELECT \(column) AS v FROM occurrences WHERE \(m.sql) ORDER BY id DESC LIMIT ?" }
            let of = try c.rows("SELECT count(*) FROM (\(recent("id"))) AS recent", m.args + [.int(Int64(window))]) { $0.int(0) }.first ?? 0
            var values: [BreakdownColumn: [(String?, Int64)]] = [:]
            for column in BreakdownColumn.allCases {
                // Most frequent first; ties by value, so the order is the same on every read.
                values[column] = try c.rows(
                    "SELECT v, count(*) FROM (\(recent(column.rawValue))) AS recent GROUP BY v ORDER BY 2 DESC, 1 LIMIT ?",
                    m.args + [.int(Int64(window)), .int(Int64(top))]
                ) { (r: any SQLRow) -> (String?, Int64) in (r.text(0), r.int(1)) }
            }
            return (values, of)
        }
    }

    /// The occurrence columns the issue page breaks an issue down by, in the order shown.
    enum BreakdownColumn: String, CaseIterable {
        case release, environment, os, installID = "install_id"
        var label: String {
            switch self {
            case .release: "Releases"
            case .environment: "Environments"
            case .os: "Operating systems"
            case .installID: "Installs"
            }
        }
    }

    /// First release an issue was seen in (by its earliest occurrence).
    func firstRelease(issueID: Int64) throws -> String? {
        try database.reading { c in
            let m = try IssueGroups.membership(c, "issue_id", issue: issueID)
            return try c.rows("SELECT release FROM occurrences WHERE \(m.sql) AND release IS NOT NULL ORDER BY timestamp LIMIT 1", m.args) { $0.text(0) }.first
                ?? nil
        }
    }

    // MARK: Occurrences

    /// Newest first, keyset on id (`before`), without reading the event blobs.
    func occurrences(issueID: Int64, before: Int64?, limit: Int) throws -> [OccurrenceRow] {
        try database.reading { c in
            let q = IssueGroups.newestFirst(
                columns: "id, event_id, timestamp, release, install_id", issue: issueID, members: try IssueGroups.members(c, issueID),
                before: before ?? Int64.max, limit: limit)
            return try c.rows(q.sql, q.args) { r in
                OccurrenceRow(id: r.int(0), eventID: r.text(1) ?? "", timestamp: r.double(2), release: r.text(3), installID: r.text(4))
            }
        }
    }

    /// The occurrences just older and just newer than `occurrenceID` among the issue's (its
    /// merged issues' included), for the issue page's "older" and "newer" links.
    func neighbours(issueID: Int64, occurrenceID: Int64) throws -> (older: Int64?, newer: Int64?) {
        try database.reading { c in
            let m = try IssueGroups.membership(c, "issue_id", issue: issueID)
            let older = try c.rows(
                "SELECT id FROM occurrences WHERE \(m.sql) AND id < ? ORDER BY id DESC LIMIT 1", m.args + [.int(occurrenceID)]
            ) { $0.int(0) }.first
            let newer = try c.rows(
                "SELECT id FROM occurrences WHERE \(m.sql) AND id > ? ORDER BY id LIMIT 1", m.args + [.int(occurrenceID)]
            ) { $0.int(0) }.first
            return (older, newer)
        }
    }

    // MARK: Actions (each one transaction)

    func setStatus(issueID: Int64, _ status: String) throws {
        // Through the lifecycle's one rule, so a page's resolve clears what an API resolve set.
        let now = Date().timeIntervalSince1970
        try database.writing { c in
            try IssueLifecycle.set(c, issueIDs: [issueID], status: IssueStatus(rawValue: status) ?? .unresolved, details: IssueStatusDetails(), now: now)
        }
    }

    /// Merges `source` into `target`: its occurrences read as `target`'s and its id keeps resolving
    /// to `target`, as after a backfill merge. Both must be live issues of one project.
    func merge(_ source: Int64, into target: Int64) throws {
        try IssueMerger.merge(source, into: target, in: store)
    }

    // MARK: Debug files

    func recordUploader(buildID: String, tokenName: String) throws {
        try database.writing { c in
            try c.execute(
                "INSERT INTO web_upload_tokens(build_id, token_name, uploaded) VALUES(?, ?, ?) ON CONFLICT DO NOTHING",
                .text(buildID), .text(tokenName), .double(Date().timeIntervalSince1970))
        }
    }

    func uploaders() throws -> [String: WebUploadInfo] {
        try database.reading { c in
            var out: [String: WebUploadInfo] = [:]
            try c.execute("SELECT build_id, token_name, uploaded FROM web_upload_tokens", []) {
                out[$0.text(0) ?? ""] = WebUploadInfo(tokenName: $0.text(1) ?? "", uploaded: $0.double(2))
            }
            return out
        }
    }

    func tokenName(token: String) throws -> String? {
        try database.reading { c in
            try c.first("SELECT name FROM server_tokens WHERE hash = ?", .text(SHA256Hash.hex(Data(token.utf8)))) { $0.text(0) } ?? nil
        }
    }

    /// Which of these issues symbolication applies to: their first occurrence's stack goes
    /// through a build-id. A Python or JavaScript issue arrives with its names already, and a
    /// "not symbolicated" badge on it would ask for a debug file that does not exist. Two index
    /// lookups per issue, whatever its size.
    func needSymbolication(_ issueIDs: [Int64]) throws -> Set<Int64> {
        try database.reading { c in
            var out = Set<Int64>()
            for id in issueIDs {
                let hit = try c.rows(
                    """
                    SELECT 1 FROM stack_modules m
                    WHERE m.stack_key = (SELECT o.stack_key FROM occurrences o WHERE o.issue_id = ? ORDER BY o.id LIMIT 1) LIMIT 1
                    """, .int(id)
                ) { $0.int(0) }
                if !hit.isEmpty { out.insert(id) }
            }
            return out
        }
    }

    /// Issues whose stored stacks go through a build-id (what a debug file makes readable), newest
    /// first, `limit` of them from the `offset`th, and how many there are in all.
    func issues(referencing buildID: String, limit: Int, offset: Int = 0) throws -> (issues: [(id: Int64, title: String, symbolicated: Bool)], total: Int64) {
        try database.reading { c in
            let live = """
                SELECT i.id, i.title, i.symbolicated, i.last_seen FROM issues i WHERE i.merged_into IS NULL AND i.id IN (
                  SELECT coalesce(g.merged_into, g.id) FROM stack_modules m JOIN occurrences o ON o.stack_key = m.stack_key
                  JOIN issues g ON g.id = o.issue_id WHERE m.build_id = ?)
                """
            let rows = try c.rows(
                live + " ORDER BY i.last_seen DESC, i.id DESC LIMIT ? OFFSET ?", .text(buildID), .int(Int64(limit)), .int(Int64(offset))
            ) { (id: $0.int(0), title: $0.text(1) ?? "", symbolicated: $0.int(2) != 0) }
            let total = try c.first("SELECT count(*) FROM (\(live)) AS l", .text(buildID)) { $0.int(0) } ?? 0
            return (rows, total)
        }
    }

    /// The binary a build-id belongs to, as events name it (`debug_meta.images[].code_file` of the
    /// newest occurrence whose stack goes through it), by its last path component; nil when no
    /// stored event names it. One event read per build-id.
    func binaryName(buildID: BuildID) throws -> String? {
        let blob = try database.reading { c in
            try c.first(
                "SELECT o.event FROM stack_modules m JOIN occurrences o ON o.stack_key = m.stack_key WHERE m.build_id = ? ORDER BY o.id DESC LIMIT 1",
                .text(buildID.hex)
            ) { $0.blob(0) }
        }
        guard let blob, let event = try? StoredEvent.decode(blob, keeping: ["debug_meta"]) else { return nil }
        let file = DebugImageMap(event: event).images.first { $0.buildID == buildID }?.codeFile
        return file.map { ($0 as NSString).lastPathComponent }.flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: Items (logs, sessions)

    /// Newest items of one type, keyset on id, handed to `visit` one at a time and read a few at
    /// a time, until `maxItems` items or `maxBytes` payload bytes have been read, or `stop` says
    /// so after an item (the caller has what it wanted). Items larger
    /// than `maxItemBytes` are passed over unread. What a page view holds is one small batch,
    /// whatever clients stored. Returns the id of the last item read when the scan stopped early
    /// (the next page's cursor), nil when it reached the oldest item.
    func scanItems(
        projectID: Int64, type: String, before: Int64?, maxItems: Int, maxBytes: Int, maxItemBytes: Int = .max,
        stop: () -> Bool = { false }, _ visit: (_ id: Int64, _ received: Double, _ payload: Data) throws -> Void
    ) throws -> Int64? {
        let batch = 8
        var cursor = before ?? Int64.max, read = 0, bytes = 0
        while true {
            let rows = try database.reading { c in
                try c.rows(
                    """
                    SELECT id, received, payload FROM items WHERE project_id = ? AND type = ? AND id < ?
                    AND \(database.dialect.byteLength)(payload) <= ? ORDER BY id DESC LIMIT ?
                    """,
                    .int(projectID), .text(type), .int(cursor), .int(Int64(min(maxItemBytes, Int(Int32.max)))), .int(Int64(batch))
                ) { (id: $0.int(0), received: $0.double(1), payload: $0.blob(2)) }
            }
            for row in rows {
                try visit(row.id, row.received, row.payload)
                cursor = row.id
                read += 1
                bytes += row.payload.count
                if read >= maxItems || bytes >= maxBytes || stop() { return row.id }
            }
            if rows.count < batch { return nil }
        }
    }

    // MARK: Sessions (WebSessions)

    func saveSession(idHash: String, principal: String, expires: Double, now: Double) throws {
        try database.writing { c in
            try c.execute("DELETE FROM web_sessions WHERE expires < ?", .double(now))
            try c.execute(
                "INSERT INTO web_sessions(id_hash, principal, expires) VALUES(?, ?, ?)", .text(idHash), .text(principal), .double(expires))
        }
    }

    /// The principal of a live session; nil when unknown or expired.
    func session(idHash: String, now: Double) throws -> (principal: String, expires: Double)? {
        try database.reading { c in
            try c.first("SELECT principal, expires FROM web_sessions WHERE id_hash = ? AND expires >= ?", .text(idHash), .double(now)) {
                (principal: $0.text(0) ?? "", expires: $0.double(1))
            }
        }
    }

    func endSession(idHash: String) throws {
        try database.writing { c in try c.execute("DELETE FROM web_sessions WHERE id_hash = ?", .text(idHash)) }
    }

    // MARK: Users

    func user(_ name: String) throws -> WebUser? {
        try database.reading { c in
            try c.first("SELECT name, salt, hash FROM web_users WHERE name = ?", .text(name)) {
                WebUser(name: $0.text(0) ?? "", salt: $0.blob(1), hash: $0.blob(2))
            }
        }
    }

    func setUser(_ u: WebUser) throws {
        try database.writing { c in
            try c.execute(
                """
                INSERT INTO web_users(name, salt, hash, created) VALUES(?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET salt = excluded.salt, hash = excluded.hash, created = excluded.created
                """, .text(u.name), .blob(u.salt), .blob(u.hash), .double(Date().timeIntervalSince1970))
        }
    }

    func users() throws -> [String] {
        try database.reading { c in try c.rows("SELECT name FROM web_users ORDER BY name") { $0.text(0) ?? "" } }
    }

    // MARK: Environment index

    /// The highest id of a grouped occurrence (0 if none): where the indexer's catch-up ends.
    func lastGroupedOccurrence() throws -> Int64 {
        try database.reading { c in try c.first("SELECT coalesce(max(id), 0) FROM occurrences WHERE processed = 1") { $0.int(0) } ?? 0 }
    }

    /// Records the environment of occurrences grouped since the last call (bounded batch), per
    /// distinct stack: stacks never change issue independently of their occurrences, so
    /// (environment, stack) answers "issues seen in environment X" across backfills and merges.
    /// Grouping records the pair itself (`GroupingOutcome.environment`), so this pass only catches
    /// up on rows grouped before (`through`: the last grouped id when this server started; rows
    /// grouped by an older binary). Returns how many occurrences it looked at.
    @discardableResult
    func indexEnvironments(batch: Int = 2000, through bound: Int64 = .max) throws -> Int {
        let rows: [(id: Int64, key: String?, event: Data)] = try database.reading { c in
            let last = try c.first("SELECT value FROM web_state WHERE key = 'env_indexed'") { $0.int(0) } ?? 0
            return try c.rows(
                "SELECT id, stack_key, event FROM occurrences WHERE id > ? AND id <= ? AND processed = 1 ORDER BY id LIMIT ?",
                .int(last), .int(bound), .int(Int64(batch))
            ) { (id: $0.int(0), key: $0.text(1), event: $0.blob(2)) }
        }
        guard let maxID = rows.last?.id else { return 0 }
        var pairs = Set<[String]>()
        for (_, key, blob) in rows {
            // Only `environment` is built: a full tree per event cost an eighth of the server's CPU
            // during an ingest storm (perf, tools/bench-ingest).
            guard let key, let event = try? StoredEvent.decode(blob, keeping: ["environment"]) else { continue }
            pairs.insert([EventFields.environment(event), key])
        }
        try database.writing { c in
            for p in pairs.sorted(by: { $0.lexicographicallyPrecedes($1) }) {  // grouping's order: no lock cycle on PostgreSQL
                try c.execute(GroupingOutcome.environmentPairSQL, .text(p[0]), .text(p[1]))
            }
            try c.execute("INSERT INTO web_state(key, value) VALUES('env_indexed', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", .int(maxID))
        }
        return rows.count
    }
}
