// `BackfillJobs` over SQLite: the one writer thread makes every take and save exclusive; leases
// are on this machine's clock (every process sharing the file reads the same one).
import Foundation
import FaultlineProtocol

extension SQLiteStore: BackfillJobs {

    public func enqueueBackfill(buildID: BuildID) throws -> Int64 {
        try writer.sync { c in
            var queued: Int64?
            try c.query("SELECT id FROM backfills WHERE build_id = ? AND state = 'queued' ORDER BY id LIMIT 1", .text(buildID.hex)) { queued = $0.int(0) }
            if let queued { return queued }
            try c.run("INSERT INTO backfills(build_id, state, started) VALUES(?, 'queued', ?)", .text(buildID.hex), .double(Date().timeIntervalSince1970))
            return c.lastInsertRowID
        }
    }

    public func claimBackfill(holder: String, lease: Double) throws -> BackfillJob? {
        let now = Date().timeIntervalSince1970
        return try writer.sync { c in
            var id: Int64?
            try c.query(
                """
                SELECT id FROM backfills WHERE state = 'queued' OR (state = 'running' AND coalesce(lease_expires, 0) <= ?)
                ORDER BY id LIMIT 1
                """, .double(now)
            ) { id = $0.int(0) }
            guard let id else { return nil }
            try c.run("UPDATE backfills SET state = 'running', holder = ?, lease_expires = ? WHERE id = ?", .text(holder), .double(now + lease), .int(id))
            var job: BackfillJob?
            try c.query(BackfillRows.jobSelect + " WHERE b.id = ?", .int(id)) { job = BackfillRows.job($0) }
            return job
        }
    }

    public func renewBackfill(id: Int64, holder: String, lease: Double) throws -> Bool {
        let expires = Date().timeIntervalSince1970 + lease
        return try writer.sync { c in
            try c.run(
                "UPDATE backfills SET lease_expires = ? WHERE id = ? AND holder = ? AND state = 'running'",
                .double(expires), .int(id), .text(holder)) > 0
        }
    }

    public func saveBackfill(_ b: BackfillRecord, resumeAfter: String?, holder: String) throws -> Bool {
        let finished = b.state == "done" || b.state == "failed"
        return try writer.sync { c in
            let changed = try c.run(
                """
                UPDATE backfills SET state = ?, stacks = ?, occurrences = ?, occurrences_done = ?, addresses = ?, issues_merged = ?, finished = ?,
                  resume_after = ?, lease_expires = CASE WHEN ? THEN NULL ELSE lease_expires END
                WHERE id = ? AND holder = ? AND state = 'running'
                """, .text(b.state), .int(b.stacks), .int(b.occurrences), .int(b.occurrencesDone), .int(b.addressesSymbolicated),
                .int(b.issuesMerged), b.finished.map { .double($0) } ?? .null, resumeAfter.map { .text($0) } ?? .null,
                .int(finished ? 1 : 0), .int(b.id), .text(holder))
            guard changed > 0 else { return false }
            // The outcome so far, also while running: a run that takes the job over continues from it.
            let merges = b.merges.map { "\($0.issue)>\($0.into)" }.joined(separator: ",")
            try c.run(
                "INSERT OR REPLACE INTO backfill_outcomes(backfill_id, occurrences_symbolicated, merges, error) VALUES(?, ?, ?, ?)",
                .int(b.id), .int(b.occurrencesSymbolicated), .text(merges), b.error.map { .text($0) } ?? .null)
            return true
        }
    }

    public func backfillJob(id: Int64) throws -> BackfillJob? {
        try read { c in
            var job: BackfillJob?
            try c.query(BackfillRows.jobSelect + " WHERE b.id = ?", .int(id)) { job = BackfillRows.job($0) }
            return job
        }
    }

    public func openBackfills() throws -> [BackfillJob] {
        try read { c in
            var out: [BackfillJob] = []
            try c.query(BackfillRows.jobSelect + " WHERE b.state IN ('queued', 'running') ORDER BY b.id") { if let j = BackfillRows.job($0) { out.append(j) } }
            return out
        }
    }
}
