// `Store` over PostgreSQL (libpq): what several `faultline serve` nodes share. Each operation is one
// transaction on a pooled connection; every statement is prepared once per connection with its
// values sent as parameters. Behaviour matches SQLiteStore operation for operation (the conformance
// suite in Tests/ServerTests runs against both); where two nodes can race, the database decides:
// unique constraints make the same new fingerprint one issue, and a row lock on the occurrence
// makes an occurrence grouped once even when two nodes pick it up (PostgresStore+Grouping.swift).
import Foundation
import FaultlineProtocol

public final class PostgresStore: Store, @unchecked Sendable {
    let pool: PostgresPool
    let credentials = CredentialCache()
    /// Plain events of concurrent requests share a transaction (PostgresIngestBatcher.swift).
    let ingestBatcher: PostgresIngestBatcher
    /// Connections whose commits do not wait for the WAL flush, for the install cap's admissions
    /// (PostgresStore+InstallWindows.swift): one statement each, no transaction of its own to open.
    let unflushedPool: PostgresPool

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
        unflushedPool = PostgresPool(url: url, size: PostgresStore.unflushedConnections, sessionSetup: "SET synchronous_commit = off")
        try PostgresSchema.migrate(pool)
        ingestBatcher = PostgresIngestBatcher(pool: pool)
    }

    /// Connections for admissions: each holds one for a single statement.
    static let unflushedConnections = 4

    public func close() {
        ingestBatcher.stop()
        pool.close()
        unflushedPool.close()
    }

    @discardableResult
    func write<T>(_ body: (PGConnection) throws -> T) throws -> T { try pool.transaction(body) }
    /// Reads that take several statements see one snapshot, like SQLiteStore's read transactions.
    func read<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try pool.transaction(isolation: "REPEATABLE READ", readOnly: true, body)
    }

    // MARK: Projects and keys: SQLCredentials (written once for both stores)

    // MARK: Ingest

    public func storeIngest(event: IncomingEvent?, items: [IncomingItem]) throws -> Int64? {
        if items.isEmpty, let event, PostgresIngestBatcher.takes(event) { return try ingestBatcher.store(event) }
        return try write { c in
            var id: Int64?
            if let e = event {
                try c.query(
                    """
                    INSERT INTO occurrences(project_id, event_id, received, timestamp, release, install_id, event, environment, os, client_address)
                    VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT(project_id, event_id) DO NOTHING RETURNING id
                    """, .int(e.projectID), .text(e.eventID), .double(e.received), .double(e.timestamp),
                    e.release.map { .text($0) } ?? .null, e.installID.map { .text($0) } ?? .null, .blob(e.compressedEvent),
                    e.environment.map { .text($0) } ?? .null, e.operatingSystem.map { .text($0) } ?? .null,
                    e.clientAddress.map { .text($0) } ?? .null
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

    // MARK: Grouping: PostgresStore+Grouping.swift

    // MARK: Reading: SQLStoreReads (written once for both stores)

    // MARK: Debug files: SQLDebugFileRecords (written once for both stores)

    // MARK: Backfill

    public func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T {
        try write { c in try body(SQLIssueEditing(c: c, dialect: .postgres)) }
    }

    // MARK: Claims (the database's clock, so nodes with skewed clocks agree on expiry)

    public func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        try write { c in
            // Exclusive against share grants (which take this lock shared): a share granted in a
            // transaction still open would be invisible to the check below.
            try c.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", .int(Self.claimLockSpace), .text(name))
            let taken =
                try c.query(
                    """
                    INSERT INTO claims(name, holder, expires) VALUES($1, $2, extract(epoch FROM clock_timestamp()) + $3::double precision)
                    ON CONFLICT(name) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires
                    WHERE claims.holder = EXCLUDED.holder OR claims.expires <= extract(epoch FROM clock_timestamp())
                    """, .text(name), .text(holder), .double(duration)) > 0
            guard taken else { return false }
            let shares = ClaimShare.pattern(claim: name)
            try c.query("DELETE FROM claims WHERE name LIKE $1 AND expires <= extract(epoch FROM clock_timestamp())", .text(shares))
            return try c.query("SELECT 1 FROM claims WHERE name LIKE $1 LIMIT 1", .text(shares)) == 0
        }
    }

    public func acquireSharedClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        try write { c in
            // Shared: grants do not wait for each other, only for an exclusive acquisition in flight.
            try c.query("SELECT pg_advisory_xact_lock_shared($1, hashtext($2))", .int(Self.claimLockSpace), .text(name))
            guard
                try c.query(
                    "SELECT 1 FROM claims WHERE name = $1 AND expires > extract(epoch FROM clock_timestamp())", .text(name)) == 0
            else { return false }
            try c.query(
                """
                INSERT INTO claims(name, holder, expires) VALUES($1, $2, extract(epoch FROM clock_timestamp()) + $3::double precision)
                ON CONFLICT(name) DO UPDATE SET expires = EXCLUDED.expires
                """, .text(ClaimShare.rowName(claim: name, holder: holder)), .text(holder), .double(duration))
            return true
        }
    }

    /// First key of the two-key advisory locks that order claim acquisitions (the second is the
    /// claim name's hash): "flcl" in ASCII. Two-key locks never collide with the migrations' one.
    static let claimLockSpace: Int64 = 0x666C_636C

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
