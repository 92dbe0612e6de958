// `Store` over SQLite in WAL mode: one writer thread with group commit, a pool of readers.
import Foundation
import CSQLite
import CFaultlineSQLiteVFS
import FaultlineProtocol
import Synchronization

public final class SQLiteStore: Store, @unchecked Sendable {
    public enum Durability: String, Sendable {
        /// fsync the WAL at every commit: acknowledged events survive power loss.
        case full
        /// fsync at checkpoints only: survives a crash of the server process, not of the machine.
        case normal
    }

    let path: String
    let writer: SQLiteWriter  // internal: the statements written once for both stores (SQLDatabase) write through it
    private let checkpointer: WALCheckpointer
    private let readers = Mutex<[SQLiteConnection]>([])
    let credentials = CredentialCache()

    public init(path: String, durability: Durability = .full) throws {
        self.path = path
        let w = try SQLiteConnection(path: path, vfs: Self.writerVFS(durability))
        try w.exec("PRAGMA journal_mode=WAL")
        try w.exec("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")")
        try w.exec("PRAGMA foreign_keys=OFF")
        // 16 MiB of page cache for the writer (SQLite's default is 2 MiB): ingest's index pages and a
        // backfill's moves stay in memory instead of being re-read from the OS page by page.
        try w.exec("PRAGMA cache_size=-16384")
        // Checkpoints run on WALCheckpointer's connection; this one only if the WAL reaches 64 MiB.
        try w.exec("PRAGMA wal_autocheckpoint=16000")
        try SQLiteSchema.migrate(w, path: path)
        try w.exec(TraceSchema.statements)  // Traces/: tables of their own, created if missing
        checkpointer = try WALCheckpointer(path: path)
        writer = SQLiteWriter(connection: w)
    }

    /// The writer's VFS: under `.full` the WAL-coalescing one (CFaultlineSQLiteVFS), which hands a
    /// commit's frames to the WAL in 124 KiB pieces at the commit's sync instead of two write calls
    /// per frame. Only under `.full`: there every commit syncs the WAL before other connections may read
    /// its frames; under `.normal` none does, so the frames must reach the file as they are written.
    /// Nil (SQLite's default) if the VFS could not be registered.
    static func writerVFS(_ durability: Durability) -> String? {
        guard durability == .full, faultline_register_wal_coalescing_vfs() == SQLITE_OK else { return nil }
        return String(cString: faultline_wal_coalescing_vfs_name)
    }

    public func close() {
        checkpointer.stop()
        writer.stop()
    }

    // MARK: Read connections

    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let conn = try readers.withLock { $0.popLast() } ?? SQLiteConnection(path: path)
        defer { readers.withLock { if $0.count < 8 { $0.append(conn) } } }
        try conn.run("BEGIN")
        defer { _ = try? conn.run("COMMIT") }
        return try body(conn)
    }

    // MARK: Projects and keys: SQLCredentials (written once for both stores)

    /// Token names and prefixes (the values themselves are not stored).
    public func serverTokens() throws -> [(name: String, prefix: String)] {
        try read { c in
            var out: [(String, String)] = []
            try c.query("SELECT name, prefix FROM server_tokens ORDER BY created") { out.append(($0.text(0) ?? "", $0.text(1) ?? "")) }
            return out
        }
    }

    // MARK: Ingest

    public func storeIngest(event: IncomingEvent?, items: [IncomingItem]) throws -> Int64? {
        try writer.sync(rerunnable: true) { c in
            var id: Int64?
            if let e = event {
                let changed = try c.run(
                    """
                    INSERT INTO occurrences(project_id, event_id, received, timestamp, release, install_id, event, environment, os, client_address)
                    VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project_id, event_id) DO NOTHING
                    """, .int(e.projectID), .text(e.eventID), .double(e.received), .double(e.timestamp),
                    e.release.map { .text($0) } ?? .null, e.installID.map { .text($0) } ?? .null, .blob(e.compressedEvent),
                    e.environment.map { .text($0) } ?? .null, e.operatingSystem.map { .text($0) } ?? .null,
                    e.clientAddress.map { .text($0) } ?? .null)
                id = changed > 0 ? c.lastInsertRowID : nil
                if let id, let trace = e.traceID {
                    _ = try c.run(SQLTraceStore.linkSQL, SQLTraceStore.linkValues(id, e.projectID, e.eventID, trace, e.spanID))
                }
                // A duplicate event (no new row) keeps the attachments of its first delivery.
                for a in id == nil ? [] : e.attachments {
                    _ = try c.run(SQLAttachmentStore.insertSQL, SQLAttachmentStore.insertValues(id!, e.projectID, a))
                }
                for b in id == nil ? [] : e.minidumpModules {
                    _ = try c.run(SQLMinidumpRecords.insertModuleSQL, .text(b.hex), .int(id!))
                }
            }
            for item in items {
                try c.run(
                    "INSERT INTO items(project_id, type, received, payload) VALUES(?, ?, ?, ?)",
                    .int(item.projectID), .text(item.type), .double(item.received), .blob(item.payload))
                if item.sessionsStarted != 0 || item.sessionsCrashed != 0 {
                    try c.run(
                        """
                        INSERT INTO session_counts(project_id, total, crashed) VALUES(?1, ?2, ?3)
                        ON CONFLICT(project_id) DO UPDATE SET total = total + ?2, crashed = crashed + ?3
                        """, .int(item.projectID), .int(item.sessionsStarted), .int(item.sessionsCrashed))
                }
            }
            return id
        }
    }

    public func unprocessedOccurrences(limit: Int) throws -> [StoredOccurrence] {
        try read { try SQLStoreReads.unprocessed($0, limit: limit) }
    }

    public func recordGrouping(_ outcomes: [GroupingOutcome]) throws {
        guard !outcomes.isEmpty else { return }
        // Statements only, so rerunnable: no savepoint around a batch that rewrites dozens of
        // pages, whose statement journal (every page's old image) spilled to a temporary file
        // and cost the writer a third of its write calls during an ingest storm.
        try writer.sync(rerunnable: true) { c in
            var knownStacks = Set<String>()
            for o in outcomes {
                // An occurrence can reach the worker twice (queued at ingest and found by a scan of
                // ungrouped rows at start-up): group it once.
                var alreadyGrouped = false
                try c.query("SELECT processed FROM occurrences WHERE id = ?", .int(o.occurrenceID)) { alreadyGrouped = $0.int(0) != 0 }
                if alreadyGrouped { continue }
                let key = o.stackKey
                if !knownStacks.contains(key) {
                    knownStacks.insert(key)
                    if try c.run("INSERT INTO stacks(key, signature) VALUES(?, ?) ON CONFLICT DO NOTHING", .text(key), .blob(o.stackEncoded)) > 0 {
                        for b in o.stackBuildIDs {
                            try c.run("INSERT INTO stack_modules(build_id, stack_key) VALUES(?, ?) ON CONFLICT DO NOTHING", .text(b.hex), .text(key))
                        }
                    }
                }
                let issueID = try Self.upsertIssue(c, projectID: o.projectID, fingerprint: o.fingerprint, timestamp: o.timestamp, count: 1)
                if let rel = o.release {
                    try c.run("INSERT INTO issue_releases(issue_id, release) VALUES(?, ?) ON CONFLICT DO NOTHING", .int(issueID), .text(rel))
                }
                try c.run("UPDATE occurrences SET processed = 1, issue_id = ?, stack_key = ? WHERE id = ?", .int(issueID), .text(key), .int(o.occurrenceID))
            }
            for p in GroupingOutcome.environmentPairs(outcomes) {
                try c.run(GroupingOutcome.environmentPairSQL, .text(p.environment), .text(p.stackKey))
            }
            for t in GroupingOutcome.tagTriples(outcomes) { try c.run(GroupingOutcome.tagTripleSQL, .text(t[0]), .text(t[1]), .text(t[2])) }
        }
    }

    /// The issue the fingerprint groups into, made when new, with `count` occurrences at
    /// `timestamp` added. A fingerprint whose issue was merged into another (by hand or by a
    /// backfill) keeps naming it, and counts go to the issue it was merged into: a merge sticks.
    static func upsertIssue(_ c: SQLiteConnection, projectID: Int64, fingerprint f: Fingerprint, timestamp: Double, count: Int64) throws -> Int64 {
        var id: Int64?
        try c.query(
            """
            INSERT INTO issues(project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated)
            VALUES(?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)
            ON CONFLICT(project_id, fingerprint) DO UPDATE SET
              first_seen = min(first_seen, ?5), last_seen = max(last_seen, ?5), count = count + ?6
            WHERE merged_into IS NULL
            RETURNING id
            """, .int(projectID), .text(f.hash), .text(f.title), .text(f.culprit), .double(timestamp), .int(count), .int(f.symbolicated ? 1 : 0)
        ) { id = $0.int(0) }
        if let id { return id }
        // `merged_into` names a live issue (merges re-point the issues merged into the one they empty).
        try c.query(
            """
            UPDATE issues SET first_seen = CASE WHEN count = 0 THEN ?3 ELSE min(first_seen, ?3) END,
              last_seen = CASE WHEN count = 0 THEN ?3 ELSE max(last_seen, ?3) END, count = count + ?4
            WHERE id = (SELECT merged_into FROM issues WHERE project_id = ?1 AND fingerprint = ?2)
            RETURNING id
            """, .int(projectID), .text(f.hash), .double(timestamp), .int(count)
        ) { id = $0.int(0) }
        guard let id else { throw StoreError.inconsistent("fingerprint \(f.hash) of project \(projectID) names neither an issue nor one it was merged into") }
        return id
    }

    // MARK: Reading: SQLStoreReads (written once for both stores)

    // MARK: Debug files: SQLDebugFileRecords (written once for both stores)

    // MARK: Backfill

    public func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T {
        try writer.sync { c in try body(SQLIssueEditing(c: c, dialect: .sqlite)) }
    }

    // MARK: Claims (the store's clock: one machine's, so nodes sharing a file agree on it)

    public func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        let now = Date().timeIntervalSince1970
        return try writer.sync { c in
            let taken =
                try c.run(
                    """
                    INSERT INTO claims(name, holder, expires) VALUES(?1, ?2, ?3)
                    ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                    WHERE claims.holder = excluded.holder OR claims.expires <= ?4
                    """, .text(name), .text(holder), .double(now + duration), .double(now)) > 0
            guard taken else { return false }
            // One writer: no share can be granted between this and the insert above.
            let shares = ClaimShare.pattern(claim: name)
            try c.run("DELETE FROM claims WHERE name LIKE ?1 AND expires <= ?2", .text(shares), .double(now))
            var live = false
            try c.query("SELECT 1 FROM claims WHERE name LIKE ?1 LIMIT 1", .text(shares)) { _ in live = true }
            return !live
        }
    }

    public func acquireSharedClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        let now = Date().timeIntervalSince1970
        return try writer.sync { c in
            var exclusive = false
            try c.query("SELECT 1 FROM claims WHERE name = ?1 AND expires > ?2", .text(name), .double(now)) { _ in exclusive = true }
            guard !exclusive else { return false }
            try c.run(
                "INSERT INTO claims(name, holder, expires) VALUES(?1, ?2, ?3) ON CONFLICT(name) DO UPDATE SET expires = excluded.expires",
                .text(ClaimShare.rowName(claim: name, holder: holder)), .text(holder), .double(now + duration))
            return true
        }
    }

    public func renewClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        let expires = Date().timeIntervalSince1970 + duration
        return try writer.sync { c in
            try c.run("UPDATE claims SET expires = ? WHERE name = ? AND holder = ?", .double(expires), .text(name), .text(holder)) > 0
        }
    }

    public func releaseClaim(_ name: String, holder: String) throws {
        try writer.sync { c in _ = try c.run("DELETE FROM claims WHERE name = ? AND holder = ?", .text(name), .text(holder)) }
    }

    public func createBackfill(buildID: BuildID) throws -> Int64 {
        try writer.sync { c in
            try c.run("INSERT INTO backfills(build_id, state, started) VALUES(?, 'queued', ?)", .text(buildID.hex), .double(Date().timeIntervalSince1970))
            return c.lastInsertRowID
        }
    }

    public func updateBackfill(_ b: BackfillRecord) throws {
        try writer.sync { c in
            try c.run(
                """
                UPDATE backfills SET state = ?, stacks = ?, occurrences = ?, occurrences_done = ?, addresses = ?, issues_merged = ?, finished = ?
                WHERE id = ?
                """, .text(b.state), .int(b.stacks), .int(b.occurrences), .int(b.occurrencesDone), .int(b.addressesSymbolicated),
                .int(b.issuesMerged), b.finished.map { .double($0) } ?? .null, .int(b.id))
            if b.state == "done" || b.state == "failed" {
                // "issue>into,issue>into": ids only, so no escaping is needed.
                let merges = b.merges.map { "\($0.issue)>\($0.into)" }.joined(separator: ",")
                try c.run(
                    "INSERT OR REPLACE INTO backfill_outcomes(backfill_id, occurrences_symbolicated, merges, error) VALUES(?, ?, ?, ?)",
                    .int(b.id), .int(b.occurrencesSymbolicated), .text(merges), b.error.map { .text($0) } ?? .null)
            }
        }
    }
}
