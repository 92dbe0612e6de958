// `Store` over PostgreSQL (libpq): what several `faultline serve` nodes share. Each operation is one
// transaction on a pooled connection; every statement is prepared once per connection with its
// values sent as parameters. Behaviour matches SQLiteStore operation for operation (the conformance
// suite in Tests/ServerTests runs against both); where two nodes can race, the database decides:
// unique constraints make the same new fingerprint one issue, and a row lock on the occurrence
// makes an occurrence grouped once even when two nodes pick it up.
import Foundation
import FaultlineProtocol

public final class PostgresStore: Store, @unchecked Sendable {
    let pool: PostgresPool
    let credentials = CredentialCache()

    /// - Parameters:
    ///   - url: a libpq connection URI (`postgres://user:password@host:port/database?…`).
    ///   - connections: pool size; the server passes its HTTP thread count plus its workers.
    ///   - durability: `.full` waits for the WAL flush at every commit (PostgreSQL's default);
    ///     `.normal` sets `synchronous_commit = off` for the store's sessions: a commit survives a
    ///     crash of our process (PostgreSQL has it), not a crash of the database's machine — the
    ///     same promise as SQLite's `.normal`.
    public init(url: String, connections: Int = 20, durability: SQLiteStore.Durability = .full) throws {
        pool = PostgresPool(
            url: url, size: connections,
            sessionSetup: durability == .normal ? "SET synchronous_commit = off" : nil)
        try PostgresSchema.migrate(pool)
    }

    public func close() { pool.close() }

    @discardableResult
    func write<T>(_ body: (PGConnection) throws -> T) throws -> T { try pool.transaction(body) }
    /// Reads that take several statements see one snapshot, like SQLiteStore's read transactions.
    func read<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try pool.transaction(isolation: "REPEATABLE READ", readOnly: true, body)
    }

    // MARK: Projects and keys: SQLCredentials (written once for both stores)

    // MARK: Ingest

    public func storeIngest(event: IncomingEvent?, items: [IncomingItem]) throws -> Int64? {
        try write { c in
            var id: Int64?
            if let e = event {
                try c.query(
                    """
                    INSERT INTO occurrences(project_id, event_id, received, timestamp, release, install_id, event, environment, os)
                    VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT(project_id, event_id) DO NOTHING RETURNING id
                    """, .int(e.projectID), .text(e.eventID), .double(e.received), .double(e.timestamp),
                    e.release.map { .text($0) } ?? .null, e.installID.map { .text($0) } ?? .null, .blob(e.compressedEvent),
                    e.environment.map { .text($0) } ?? .null, e.operatingSystem.map { .text($0) } ?? .null
                ) { id = $0.int(0) }
                if let id, let trace = e.traceID {
                    _ = try c.query(PostgresPlaceholders.numbered(SQLTraceStore.linkSQL), SQLTraceStore.linkValues(id, e.projectID, e.eventID, trace, e.spanID))
                }
                // A duplicate event (no new row) keeps the attachments of its first delivery.
                for a in id == nil ? [] : e.attachments {
                    _ = try c.query(PostgresPlaceholders.numbered(SQLAttachmentStore.insertSQL), SQLAttachmentStore.insertValues(id!, e.projectID, a))
                }
                for b in id == nil ? [] : e.minidumpModules {
                    _ = try c.query(PostgresPlaceholders.numbered(SQLMinidumpRecords.insertModuleSQL), .text(b.hex), .int(id!))
                }
            }
            for item in items {
                try c.query(
                    "INSERT INTO items(project_id, type, received, payload) VALUES($1, $2, $3, $4)",
                    .int(item.projectID), .text(item.type), .double(item.received), .blob(item.payload))
                if item.sessionsStarted != 0 || item.sessionsCrashed != 0 {
                    try c.query(
                        """
                        INSERT INTO session_counts(project_id, total, crashed) VALUES($1, $2, $3)
                        ON CONFLICT(project_id) DO UPDATE SET total = session_counts.total + EXCLUDED.total,
                          crashed = session_counts.crashed + EXCLUDED.crashed
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
        // Issues upserted in one order on every node, so two nodes' batches cannot deadlock on them.
        let ordered = outcomes.sorted { ($0.projectID, $0.fingerprint.hash, $0.occurrenceID) < ($1.projectID, $1.fingerprint.hash, $1.occurrenceID) }
        try write { c in
            var knownStacks = Set<String>()
            for o in ordered {
                // Claims the occurrence: a second node grouping the same row waits on this row lock,
                // then finds it processed and skips it (no double count).
                let key = o.stackKey
                guard
                    try c.query(
                        "UPDATE occurrences SET processed = 1, stack_key = $2 WHERE id = $1 AND processed = 0",
                        .int(o.occurrenceID), .text(key)) > 0
                else { continue }
                if !knownStacks.contains(key) {
                    knownStacks.insert(key)
                    if try c.query("INSERT INTO stacks(key, signature) VALUES($1, $2) ON CONFLICT DO NOTHING", .text(key), .blob(o.stackEncoded)) > 0 {
                        for b in o.stackBuildIDs {
                            try c.query("INSERT INTO stack_modules(build_id, stack_key) VALUES($1, $2) ON CONFLICT DO NOTHING", .text(b.hex), .text(key))
                        }
                    }
                }
                let issueID = try Self.upsertIssue(c, projectID: o.projectID, fingerprint: o.fingerprint, timestamp: o.timestamp, count: 1)
                if let rel = o.release {
                    try c.query("INSERT INTO issue_releases(issue_id, release) VALUES($1, $2) ON CONFLICT DO NOTHING", .int(issueID), .text(rel))
                }
                try c.query("UPDATE occurrences SET issue_id = $1 WHERE id = $2", .int(issueID), .int(o.occurrenceID))
            }
            // After the issues (both in a fixed order): no lock cycle between two nodes' batches.
            for p in GroupingOutcome.environmentPairs(ordered) {
                try c.query(PostgresPlaceholders.numbered(GroupingOutcome.environmentPairSQL), .text(p.environment), .text(p.stackKey))
            }
            for t in GroupingOutcome.tagTriples(ordered) {
                try c.query(PostgresPlaceholders.numbered(GroupingOutcome.tagTripleSQL), .text(t[0]), .text(t[1]), .text(t[2]))
            }
        }
    }

    static func upsertIssue(_ c: PGConnection, projectID: Int64, fingerprint f: Fingerprint, timestamp: Double, count: Int64) throws -> Int64 {
        var id: Int64 = 0
        try c.query(
            """
            INSERT INTO issues(project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated)
            VALUES($1, $2, $3, $4, $5, $5, $6, $7)
            ON CONFLICT(project_id, fingerprint) DO UPDATE SET
              first_seen = least(issues.first_seen, EXCLUDED.first_seen), last_seen = greatest(issues.last_seen, EXCLUDED.last_seen),
              count = issues.count + EXCLUDED.count
            RETURNING id
            """, .int(projectID), .text(f.hash), .text(f.title), .text(f.culprit), .double(timestamp), .int(count), .int(f.symbolicated ? 1 : 0)
        ) { id = $0.int(0) }
        return id
    }

    // MARK: Reading: SQLStoreReads (written once for both stores)

    // MARK: Debug files: SQLDebugFileRecords (written once for both stores)

    // MARK: Backfill

    public func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T {
        try write { c in try body(SQLIssueEditing(c: c, dialect: .postgres)) }
    }

    // MARK: Claims (the database's clock, so nodes with skewed clocks agree on expiry)

    public func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        try write { c in
            try c.query(
                """
                INSERT INTO claims(name, holder, expires) VALUES($1, $2, extract(epoch FROM clock_timestamp()) + $3::double precision)
                ON CONFLICT(name) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires
                WHERE claims.holder = EXCLUDED.holder OR claims.expires <= extract(epoch FROM clock_timestamp())
                """, .text(name), .text(holder), .double(duration)) > 0
        }
    }

    public func renewClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        try write { c in
            try c.query(
                "UPDATE claims SET expires = extract(epoch FROM clock_timestamp()) + $1::double precision WHERE name = $2 AND holder = $3",
                .double(duration), .text(name), .text(holder)) > 0
        }
    }

    public func releaseClaim(_ name: String, holder: String) throws {
        try write { c in try c.query("DELETE FROM claims WHERE name = $1 AND holder = $2", .text(name), .text(holder)) }
    }

    public func createBackfill(buildID: BuildID) throws -> Int64 {
        try write { c in
            var id: Int64 = 0
            try c.query(
                "INSERT INTO backfills(build_id, state, started) VALUES($1, 'queued', $2) RETURNING id",
                .text(buildID.hex), .double(Date().timeIntervalSince1970)
            ) { id = $0.int(0) }
            return id
        }
    }

    public func updateBackfill(_ b: BackfillRecord) throws {
        try write { c in
            try c.query(
                """
                UPDATE backfills SET state = $1, stacks = $2, occurrences = $3, occurrences_done = $4, addresses = $5, issues_merged = $6, finished = $7
                WHERE id = $8
                """, .text(b.state), .int(b.stacks), .int(b.occurrences), .int(b.occurrencesDone), .int(b.addressesSymbolicated),
                .int(b.issuesMerged), b.finished.map { .double($0) } ?? .null, .int(b.id))
            if b.state == "done" || b.state == "failed" {
                let merges = b.merges.map { "\($0.issue)>\($0.into)" }.joined(separator: ",")
                try c.query(
                    """
                    INSERT INTO backfill_outcomes(backfill_id, occurrences_symbolicated, merges, error) VALUES($1, $2, $3, $4)
                    ON CONFLICT(backfill_id) DO UPDATE SET occurrences_symbolicated = EXCLUDED.occurrences_symbolicated,
                      merges = EXCLUDED.merges, error = EXCLUDED.error
                    """, .int(b.id), .int(b.occurrencesSymbolicated), .text(merges), b.error.map { .text($0) } ?? .null)
            }
        }
    }
}
