// `BackfillJobs` over PostgreSQL. A job is taken with `FOR UPDATE SKIP LOCKED` in a short
// transaction and held afterwards by a lease column on the database's clock, not by a lock:
// a row or advisory lock held for a whole backfill would pin a pooled connection for its length
// and tie "the holder is alive" to a TCP connection (a hung but connected node would keep it
// forever). SKIP LOCKED lets two nodes polling at once take different jobs instead of queueing
// on one row; the lease decides when a dead holder's job may be taken over.
import Foundation
import FaultlineProtocol

extension PostgresStore: BackfillJobs {
    static let now = "extract(epoch FROM clock_timestamp())"

    public func enqueueBackfill(buildID: BuildID) throws -> Int64 {
        try pool.transaction { c in
            // Two nodes queueing the same build-id at once (both found it unfinished at start):
            // a transaction-level advisory lock per build-id makes the check and insert one step.
            try c.query("SELECT pg_advisory_xact_lock(1717, hashtext($1))", .text(buildID.hex))
            var queued: Int64?
            try c.query("SELECT id FROM backfills WHERE build_id = $1 AND state = 'queued' ORDER BY id LIMIT 1", .text(buildID.hex)) { queued = $0.int(0) }
            if let queued { return queued }
            var id: Int64 = 0
            try c.query(
                "INSERT INTO backfills(build_id, state, started) VALUES($1, 'queued', $2) RETURNING id",
                .text(buildID.hex), .double(Date().timeIntervalSince1970)
            ) { id = $0.int(0) }
            return id
        }
    }

    public func claimBackfill(holder: String, lease: Double) throws -> BackfillJob? {
        try pool.transaction { c in
            var id: Int64?
            try c.query(
                """
                UPDATE backfills SET state = 'running', holder = $1, lease_expires = \(Self.now) + $2::double precision
                WHERE id = (SELECT id FROM backfills
                            WHERE state = 'queued' OR (state = 'running' AND coalesce(lease_expires, 0) <= \(Self.now))
                            ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id
                """, .text(holder), .double(lease)
            ) { id = $0.int(0) }
            guard let id else { return nil }
            var job: BackfillJob?
            try c.query(BackfillRows.jobSelect + " WHERE b.id = $1", .int(id)) { job = BackfillRows.job($0) }
            return job
        }
    }

    public func renewBackfill(id: Int64, holder: String, lease: Double) throws -> Bool {
        try pool.transaction { c in
            try c.query(
                "UPDATE backfills SET lease_expires = \(Self.now) + $1::double precision WHERE id = $2 AND holder = $3 AND state = 'running'",
                .double(lease), .int(id), .text(holder)) > 0
        }
    }

    public func saveBackfill(_ b: BackfillRecord, resumeAfter: String?, holder: String) throws -> Bool {
        let finished = b.state == "done" || b.state == "failed"
        return try pool.transaction { c in
            let changed = try c.query(
                """
                UPDATE backfills SET state = $1, stacks = $2, occurrences = $3, occurrences_done = $4, addresses = $5, issues_merged = $6,
                  finished = $7, resume_after = $8, lease_expires = CASE WHEN $9::int = 1 THEN NULL ELSE lease_expires END
                WHERE id = $10 AND holder = $11 AND state = 'running'
                """, .text(b.state), .int(b.stacks), .int(b.occurrences), .int(b.occurrencesDone), .int(b.addressesSymbolicated),
                .int(b.issuesMerged), b.finished.map { .double($0) } ?? .null, resumeAfter.map { .text($0) } ?? .null,
                .int(finished ? 1 : 0), .int(b.id), .text(holder))
            guard changed > 0 else { return false }
            // The outcome so far, also while running: a run that takes the job over continues from it.
            let merges = b.merges.map { "\($0.issue)>\($0.into)" }.joined(separator: ",")
            try c.query(
                """
                INSERT INTO backfill_outcomes(backfill_id, occurrences_symbolicated, merges, error) VALUES($1, $2, $3, $4)
                ON CONFLICT(backfill_id) DO UPDATE SET occurrences_symbolicated = EXCLUDED.occurrences_symbolicated,
                  merges = EXCLUDED.merges, error = EXCLUDED.error
                """, .int(b.id), .int(b.occurrencesSymbolicated), .text(merges), b.error.map { .text($0) } ?? .null)
            return true
        }
    }

    public func backfillJob(id: Int64) throws -> BackfillJob? {
        try pool.transaction(readOnly: true) { c in
            var job: BackfillJob?
            try c.query(BackfillRows.jobSelect + " WHERE b.id = $1", .int(id)) { job = BackfillRows.job($0) }
            return job
        }
    }

    public func openBackfills() throws -> [BackfillJob] {
        try pool.transaction(readOnly: true) { c in
            var out: [BackfillJob] = []
            try c.query(BackfillRows.jobSelect + " WHERE b.state IN ('queued', 'running') ORDER BY b.id") { if let j = BackfillRows.job($0) { out.append(j) } }
            return out
        }
    }
}
