// `Store` over SQLite in WAL mode: one writer thread with group commit, a pool of readers.
import Foundation
import CSQLite
import FaultlineProtocol

public final class SQLiteStore: Store, @unchecked Sendable {
    public enum Durability: String, Sendable {
        /// fsync the WAL at every commit: acknowledged events survive power loss.
        case full
        /// fsync at checkpoints only: survives a crash of the server process, not of the machine.
        case normal
    }

    let path: String
    let writer: SQLiteWriter  // internal: Web/WebQueries and Traces/SQLiteStore+Traces add their own tables
    private let checkpointer: WALCheckpointer
    private let readLock = NSLock()
    private var readers: [SQLiteConnection] = []
    private let keyLock = NSLock()
    private var keyCache: [String: PublicKeyRecord] = [:]
    private var tokenCache: Set<String> = []

    public init(path: String, durability: Durability = .full) throws {
        self.path = path
        let w = try SQLiteConnection(path: path)
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

    public func close() {
        checkpointer.stop()
        writer.stop()
    }

    // MARK: Read connections

    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        readLock.lock()
        let c = readers.popLast()
        readLock.unlock()
        let conn = try c ?? SQLiteConnection(path: path)
        defer { readLock.lock(); if readers.count < 8 { readers.append(conn) }; readLock.unlock() }
        try conn.run("BEGIN")
        defer { _ = try? conn.run("COMMIT") }
        return try body(conn)
    }

    // MARK: Projects and keys

    public func createProject(slug: String, name: String) throws -> ProjectRecord {
        try writer.sync { c in
            try c.run("INSERT INTO projects(slug, name, created) VALUES(?, ?, ?)", .text(slug), .text(name), .double(Date().timeIntervalSince1970))
            return ProjectRecord(id: c.lastInsertRowID, slug: slug, name: name)
        }
    }

    public func projects() throws -> [ProjectRecord] {
        try read { c in
            var out: [ProjectRecord] = []
            try c.query("SELECT id, slug, name FROM projects ORDER BY id") { r in
                out.append(ProjectRecord(id: r.int(0), slug: r.text(1) ?? "", name: r.text(2) ?? ""))
            }
            return out
        }
    }

    public func project(idOrSlug: String) throws -> ProjectRecord? {
        try projects().first { String($0.id) == idOrSlug || $0.slug == idOrSlug }
    }

    public func createPublicKey(projectID: Int64, allowedAppIDs: [String]) throws -> PublicKeyRecord {
        let key = Keys.newPublicKey()
        let record = PublicKeyRecord(key: key, projectID: projectID, allowedAppIDs: allowedAppIDs)
        try writer.sync { c in
            try c.run("INSERT INTO public_keys(key, project_id, app_ids, created) VALUES(?, ?, ?, ?)",
                      .text(key.value), .int(projectID), .text(allowedAppIDs.joined(separator: ",")), .double(Date().timeIntervalSince1970))
        }
        keyLock.lock(); keyCache[key.value] = record; keyLock.unlock()
        return record
    }

    public func publicKeys(projectID: Int64?) throws -> [PublicKeyRecord] {
        try read { c in
            var out: [PublicKeyRecord] = []
            try c.query("SELECT key, project_id, app_ids FROM public_keys WHERE ?1 IS NULL OR project_id = ?1 ORDER BY created",
                        projectID.map { .int($0) } ?? .null) { r in
                out.append(Self.keyRecord(r))
            }
            return out
        }
    }

    private static func keyRecord(_ r: SQLiteRow) -> PublicKeyRecord {
        let apps = (r.text(2) ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return PublicKeyRecord(key: PublicKey(r.text(0) ?? ""), projectID: r.int(1), allowedAppIDs: apps)
    }

    public func publicKey(_ key: String) throws -> PublicKeyRecord? {
        keyLock.lock()
        if let hit = keyCache[key] { keyLock.unlock(); return hit }
        keyLock.unlock()
        let found: PublicKeyRecord? = try read { c in
            var rec: PublicKeyRecord?
            try c.query("SELECT key, project_id, app_ids FROM public_keys WHERE key = ?", .text(key)) { rec = Self.keyRecord($0) }
            return rec
        }
        if let found { keyLock.lock(); keyCache[key] = found; keyLock.unlock() }
        return found
    }

    public func createServerToken(name: String) throws -> String {
        let token = Keys.newServerToken()
        try writer.sync { c in
            try c.run("INSERT INTO server_tokens(hash, name, prefix, created) VALUES(?, ?, ?, ?)",
                      .text(SHA256Hash.hex(Data(token.utf8))), .text(name), .text(String(token.prefix(9))), .double(Date().timeIntervalSince1970))
        }
        return token
    }

    public func isServerToken(_ token: String) throws -> Bool {
        let h = SHA256Hash.hex(Data(token.utf8))
        keyLock.lock()
        if tokenCache.contains(h) { keyLock.unlock(); return true }
        keyLock.unlock()
        let found: Bool = try read { c in
            var ok = false
            try c.query("SELECT 1 FROM server_tokens WHERE hash = ?", .text(h)) { _ in ok = true }
            return ok
        }
        if found { keyLock.lock(); tokenCache.insert(h); keyLock.unlock() }
        return found
    }

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
        try writer.sync { c in
            var id: Int64?
            if let e = event {
                let changed = try c.run("""
                    INSERT INTO occurrences(project_id, event_id, received, timestamp, release, install_id, event)
                    VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project_id, event_id) DO NOTHING
                    """, .int(e.projectID), .text(e.eventID), .double(e.received), .double(e.timestamp),
                    e.release.map { .text($0) } ?? .null, e.installID.map { .text($0) } ?? .null, .blob(e.compressedEvent))
                id = changed > 0 ? c.lastInsertRowID : nil
            }
            for item in items {
                try c.run("INSERT INTO items(project_id, type, received, payload) VALUES(?, ?, ?, ?)",
                          .int(item.projectID), .text(item.type), .double(item.received), .blob(item.payload))
                if item.sessionsStarted != 0 || item.sessionsCrashed != 0 {
                    try c.run("""
                        INSERT INTO session_counts(project_id, total, crashed) VALUES(?1, ?2, ?3)
                        ON CONFLICT(project_id) DO UPDATE SET total = total + ?2, crashed = crashed + ?3
                        """, .int(item.projectID), .int(item.sessionsStarted), .int(item.sessionsCrashed))
                }
            }
            return id
        }
    }

    public func unprocessedOccurrences(limit: Int) throws -> [StoredOccurrence] {
        try read { c in
            var out: [StoredOccurrence] = []
            try c.query("\(Self.occurrenceColumns) WHERE processed = 0 ORDER BY id LIMIT ?", .int(Int64(limit))) { out.append(Self.occurrence($0)) }
            return out
        }
    }

    static let occurrenceColumns = "SELECT id, project_id, event_id, received, timestamp, release, issue_id, event FROM occurrences"
    static func occurrence(_ r: SQLiteRow) -> StoredOccurrence {
        StoredOccurrence(id: r.int(0), projectID: r.int(1), eventID: r.text(2) ?? "", received: r.double(3), timestamp: r.double(4),
                         release: r.text(5), issueID: r.isNull(6) ? nil : r.int(6), compressedEvent: r.blob(7))
    }

    public func recordGrouping(_ outcomes: [GroupingOutcome]) throws {
        guard !outcomes.isEmpty else { return }
        try writer.sync { c in
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
                        for b in o.stack.buildIDs {
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
        }
    }

    static func upsertIssue(_ c: SQLiteConnection, projectID: Int64, fingerprint f: Fingerprint, timestamp: Double, count: Int64) throws -> Int64 {
        var id: Int64 = 0
        try c.query("""
            INSERT INTO issues(project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated)
            VALUES(?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)
            ON CONFLICT(project_id, fingerprint) DO UPDATE SET
              first_seen = min(first_seen, ?5), last_seen = max(last_seen, ?5), count = count + ?6
            RETURNING id
            """, .int(projectID), .text(f.hash), .text(f.title), .text(f.culprit), .double(timestamp), .int(count), .int(f.symbolicated ? 1 : 0)) { id = $0.int(0) }
        return id
    }

    // MARK: Reading

    static let issueColumns = "SELECT id, project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated, merged_into FROM issues"

    private static func issue(_ r: SQLiteRow, _ c: SQLiteConnection) throws -> IssueRecord {
        var i = IssueRecord(id: r.int(0), projectID: r.int(1), fingerprint: r.text(2) ?? "", title: r.text(3) ?? "", culprit: r.text(4) ?? "",
                            firstSeen: r.double(5), lastSeen: r.double(6), count: r.int(7), releases: [], symbolicated: r.int(8) != 0,
                            mergedInto: r.isNull(9) ? nil : r.int(9))
        try c.query("SELECT release FROM issue_releases WHERE issue_id = ? ORDER BY release", .int(i.id)) { i.releases.append($0.text(0) ?? "") }
        return i
    }

    public func issues(projectID: Int64, limit: Int, offset: Int) throws -> [IssueRecord] {
        try read { c in
            var rows: [IssueRecord] = []
            var raw: [(Int64)] = []
            try c.query("SELECT id FROM issues WHERE project_id = ? AND merged_into IS NULL AND count > 0 ORDER BY last_seen DESC LIMIT ? OFFSET ?",
                        .int(projectID), .int(Int64(limit)), .int(Int64(offset))) { raw.append($0.int(0)) }
            for id in raw {
                try c.query("\(Self.issueColumns) WHERE id = ?", .int(id)) { rows.append(try Self.issue($0, c)) }
            }
            return rows
        }
    }

    public func issue(id: Int64) throws -> IssueRecord? {
        try read { c in
            var current = id
            for _ in 0..<32 {
                var found: IssueRecord?
                try c.query("\(Self.issueColumns) WHERE id = ?", .int(current)) { found = try Self.issue($0, c) }
                guard let f = found else { return nil }
                guard let next = f.mergedInto else { return f }
                current = next
            }
            return nil
        }
    }

    public func occurrences(issueID: Int64, limit: Int, offset: Int) throws -> [StoredOccurrence] {
        try read { c in
            var out: [StoredOccurrence] = []
            try c.query("\(Self.occurrenceColumns) WHERE issue_id = ? ORDER BY id DESC LIMIT ? OFFSET ?",
                        .int(issueID), .int(Int64(limit)), .int(Int64(offset))) { out.append(Self.occurrence($0)) }
            return out
        }
    }

    public func occurrence(projectID: Int64, eventID: String) throws -> StoredOccurrence? {
        try read { c in
            var out: StoredOccurrence?
            try c.query("\(Self.occurrenceColumns) WHERE project_id = ? AND event_id = ?", .int(projectID), .text(eventID)) { out = Self.occurrence($0) }
            return out
        }
    }

    public func occurrence(id: Int64) throws -> StoredOccurrence? {
        try read { c in
            var out: StoredOccurrence?
            try c.query("\(Self.occurrenceColumns) WHERE id = ?", .int(id)) { out = Self.occurrence($0) }
            return out
        }
    }

    public func counts(projectID: Int64) throws -> (occurrences: Int64, processed: Int64, issues: Int64) {
        try read { c in
            var occ: Int64 = 0, processed: Int64 = 0, issues: Int64 = 0
            // Counted from indexes only (the partial index holds just the ungrouped rows).
            try c.query("SELECT count(*) FROM occurrences WHERE project_id = ?", .int(projectID)) { occ = $0.int(0) }
            var unprocessed: Int64 = 0
            try c.query("SELECT count(*) FROM occurrences WHERE processed = 0 AND project_id = ?", .int(projectID)) { unprocessed = $0.int(0) }
            processed = occ - unprocessed
            try c.query("SELECT count(*) FROM issues WHERE project_id = ? AND merged_into IS NULL AND count > 0", .int(projectID)) { issues = $0.int(0) }
            return (occ, processed, issues)
        }
    }

    public func itemCounts(projectID: Int64) throws -> ItemCounts {
        try read { c in
            var counts = ItemCounts(byType: [:], sessionsTotal: 0, sessionsCrashed: 0)
            try c.query("SELECT type, count(*) FROM items WHERE project_id = ? GROUP BY type", .int(projectID)) { counts.byType[$0.text(0) ?? ""] = $0.int(1) }
            try c.query("SELECT total, crashed FROM session_counts WHERE project_id = ?", .int(projectID)) {
                counts.sessionsTotal = $0.int(0); counts.sessionsCrashed = $0.int(1)
            }
            return counts
        }
    }

    /// Total stored occurrences across projects (benchmarks poll this).
    public func totals() throws -> (occurrences: Int64, processed: Int64) {
        try read { c in
            var t: (Int64, Int64) = (0, 0)
            try c.query("SELECT count(*) FROM occurrences") { t.0 = $0.int(0) }
            try c.query("SELECT count(*) FROM occurrences WHERE processed = 0") { t.1 = t.0 - $0.int(0) }
            return t
        }
    }

    // MARK: Debug files

    public func recordDebugFile(_ d: DebugFileRecord) throws {
        try writer.sync { c in
            try c.run("""
                INSERT INTO debug_files(build_id, has_debug_info, has_symbols, is_executable, size, name, uploaded)
                VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(build_id) DO UPDATE SET
                  has_debug_info = max(has_debug_info, excluded.has_debug_info), has_symbols = max(has_symbols, excluded.has_symbols),
                  is_executable = max(is_executable, excluded.is_executable), size = excluded.size, name = excluded.name, uploaded = excluded.uploaded
                """, .text(d.buildID.hex), .int(d.hasDebugInfo ? 1 : 0), .int(d.hasSymbols ? 1 : 0), .int(d.isExecutable ? 1 : 0),
                .int(d.size), .text(d.name), .double(d.uploaded))
        }
    }

    private static func debugFile(_ r: SQLiteRow) -> DebugFileRecord? {
        guard let b = r.text(0).flatMap(BuildID.init(hex:)) else { return nil }
        return DebugFileRecord(buildID: b, hasDebugInfo: r.int(1) != 0, hasSymbols: r.int(2) != 0, isExecutable: r.int(3) != 0,
                               size: r.int(4), name: r.text(5) ?? "", uploaded: r.double(6))
    }

    public func debugFile(buildID: BuildID) throws -> DebugFileRecord? {
        try read { c in
            var out: DebugFileRecord?
            try c.query("SELECT build_id, has_debug_info, has_symbols, is_executable, size, name, uploaded FROM debug_files WHERE build_id = ?",
                        .text(buildID.hex)) { out = Self.debugFile($0) }
            return out
        }
    }

    public func debugFiles() throws -> [DebugFileRecord] {
        try read { c in
            var out: [DebugFileRecord] = []
            try c.query("SELECT build_id, has_debug_info, has_symbols, is_executable, size, name, uploaded FROM debug_files ORDER BY uploaded") {
                if let d = Self.debugFile($0) { out.append(d) }
            }
            return out
        }
    }

    public func recordUpload(checksum: String, buildID: BuildID) throws {
        try writer.sync { c in
            try c.run("INSERT INTO uploads(checksum, build_id, uploaded) VALUES(?, ?, ?) ON CONFLICT DO NOTHING",
                      .text(checksum), .text(buildID.hex), .double(Date().timeIntervalSince1970))
        }
    }

    public func recordSourceFiles(buildID: BuildID, _ files: [SourceFileRecord]) throws {
        try writer.sync { c in
            for f in files {
                try c.run("INSERT OR REPLACE INTO source_files(build_id, path, sha1, size) VALUES(?, ?, ?, ?)",
                          .text(buildID.hex), .text(f.path), .text(f.sha1), .int(f.size))
            }
        }
    }

    public func sourceFile(buildID: BuildID, path: String) throws -> SourceFileRecord? {
        try read { c in
            var out: SourceFileRecord?
            try c.query("SELECT path, sha1, size FROM source_files WHERE build_id = ? AND path = ?", .text(buildID.hex), .text(path)) {
                out = SourceFileRecord(path: $0.text(0) ?? "", sha1: $0.text(1) ?? "", size: $0.int(2))
            }
            return out
        }
    }

    public func uploadedBuildID(checksum: String) throws -> BuildID? {
        try read { c in
            var out: BuildID?
            try c.query("SELECT build_id FROM uploads WHERE checksum = ?", .text(checksum)) { out = $0.text(0).flatMap(BuildID.init(hex:)) }
            return out
        }
    }

    // MARK: Backfill

    public func stacks(referencing buildID: BuildID) throws -> [StoredStack] {
        try read { c in
            var out: [StoredStack] = []
            try c.query("""
                SELECT s.key, s.signature, o.project_id, count(*)
                FROM stack_modules m JOIN stacks s ON s.key = m.stack_key JOIN occurrences o ON o.stack_key = s.key
                WHERE m.build_id = ? GROUP BY s.key, o.project_id
                """, .text(buildID.hex)) { r in
                if let sig = StackSignature.decode(r.blob(1)) {
                    out.append(StoredStack(signature: sig, projectID: r.int(2), occurrences: r.int(3)))
                }
            }
            return out
        }
    }

    public func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T {
        try writer.sync { c in try body(SQLiteIssueEditing(c: c)) }
    }

    // MARK: Claims (the store's clock: one machine's, so nodes sharing a file agree on it)

    public func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        let now = Date().timeIntervalSince1970
        return try writer.sync { c in
            try c.run("""
                INSERT INTO claims(name, holder, expires) VALUES(?1, ?2, ?3)
                ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                WHERE claims.holder = excluded.holder OR claims.expires <= ?4
                """, .text(name), .text(holder), .double(now + duration), .double(now)) > 0
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

    /// Count, first/last seen and releases from the occurrences the issue holds now.
    static func recomputeIssue(_ c: SQLiteConnection, _ id: Int64) throws {
        var merged = false
        try c.query("SELECT merged_into IS NOT NULL FROM issues WHERE id = ?", .int(id)) { merged = $0.int(0) != 0 }
        if merged { try c.run("DELETE FROM issue_releases WHERE issue_id = ?", .int(id)); return }
        // One pass over the issue's occurrences for all three (three subqueries read them three times).
        try c.run("""
            UPDATE issues SET (count, first_seen, last_seen) =
              (SELECT count(*), coalesce(min(o.timestamp), issues.first_seen), coalesce(max(o.timestamp), issues.last_seen)
               FROM occurrences o WHERE o.issue_id = ?1)
            WHERE id = ?1
            """, .int(id))
        try c.run("DELETE FROM issue_releases WHERE issue_id = ?", .int(id))
        try c.run("INSERT INTO issue_releases(issue_id, release) SELECT DISTINCT ?1, release FROM occurrences WHERE issue_id = ?1 AND release IS NOT NULL", .int(id))
    }

    public func createBackfill(buildID: BuildID) throws -> Int64 {
        try writer.sync { c in
            try c.run("INSERT INTO backfills(build_id, state, started) VALUES(?, 'queued', ?)", .text(buildID.hex), .double(Date().timeIntervalSince1970))
            return c.lastInsertRowID
        }
    }

    public func updateBackfill(_ b: BackfillRecord) throws {
        try writer.sync { c in
            try c.run("""
                UPDATE backfills SET state = ?, stacks = ?, occurrences = ?, occurrences_done = ?, addresses = ?, issues_merged = ?, finished = ?
                WHERE id = ?
                """, .text(b.state), .int(b.stacks), .int(b.occurrences), .int(b.occurrencesDone), .int(b.addressesSymbolicated),
                .int(b.issuesMerged), b.finished.map { .double($0) } ?? .null, .int(b.id))
            if b.state == "done" || b.state == "failed" {
                // "issue>into,issue>into": ids only, so no escaping is needed.
                let merges = b.merges.map { "\($0.issue)>\($0.into)" }.joined(separator: ",")
                try c.run("INSERT OR REPLACE INTO backfill_outcomes(backfill_id, occurrences_symbolicated, merges, error) VALUES(?, ?, ?, ?)",
                          .int(b.id), .int(b.occurrencesSymbolicated), .text(merges), b.error.map { .text($0) } ?? .null)
            }
        }
    }

    public func latestBackfill(buildID: BuildID) throws -> BackfillRecord? {
        try read { c in
            var out: BackfillRecord?
            try c.query(Self.backfillSelect + " WHERE b.build_id = ? ORDER BY b.id DESC LIMIT 1", .text(buildID.hex)) { out = Self.backfillRecord($0) }
            return out
        }
    }

    static let backfillSelect = """
        SELECT b.id, b.build_id, b.state, b.stacks, b.occurrences, b.occurrences_done, b.addresses, b.issues_merged, b.started, b.finished,
               o.occurrences_symbolicated, o.merges, o.error
        FROM backfills b LEFT JOIN backfill_outcomes o ON o.backfill_id = b.id
        """

    static func backfillRecord(_ r: SQLiteRow) -> BackfillRecord? {
        guard let b = r.text(1).flatMap(BuildID.init(hex:)) else { return nil }
        var rec = BackfillRecord(id: r.int(0), buildID: b, state: r.text(2) ?? "", stacks: r.int(3), occurrences: r.int(4),
                                 occurrencesDone: r.int(5), addressesSymbolicated: r.int(6), issuesMerged: r.int(7),
                                 started: r.double(8), finished: r.isNull(9) ? nil : r.double(9))
        rec.occurrencesSymbolicated = r.isNull(10) ? 0 : r.int(10)
        rec.merges = (r.text(11) ?? "").split(separator: ",").compactMap { pair in
            let p = pair.split(separator: ">")
            guard p.count == 2, let a = Int64(p[0]), let b = Int64(p[1]) else { return nil }
            return IssueMergeRecord(issue: a, into: b)
        }
        rec.error = r.isNull(12) ? nil : r.text(12)
        return rec
    }

    public func backfills(limit: Int) throws -> [BackfillRecord] {
        try read { c in
            var out: [BackfillRecord] = []
            try c.query(Self.backfillSelect + " ORDER BY b.id DESC LIMIT ?", .int(Int64(limit))) { r in
                if let rec = Self.backfillRecord(r) { out.append(rec) }
            }
            return out
        }
    }
}
