// Backfill rows → records, written once for both stores (the same columns on SQLite and
// PostgreSQL), and the two backfill reads that are the same statement on both.
import Foundation
import FaultlineProtocol

enum BackfillRows {
    static let select = """
        SELECT b.id, b.build_id, b.state, b.stacks, b.occurrences, b.occurrences_done, b.addresses, b.issues_merged, b.started, b.finished,
               o.occurrences_symbolicated, o.merges, o.error
        FROM backfills b LEFT JOIN backfill_outcomes o ON o.backfill_id = b.id
        """

    /// `select` plus the job columns (holder, lease, resume point) at 13, 14, 15.
    static let jobSelect = """
        SELECT b.id, b.build_id, b.state, b.stacks, b.occurrences, b.occurrences_done, b.addresses, b.issues_merged, b.started, b.finished,
               o.occurrences_symbolicated, o.merges, o.error, b.holder, b.lease_expires, b.resume_after
        FROM backfills b LEFT JOIN backfill_outcomes o ON o.backfill_id = b.id
        """

    static func record(_ r: any SQLRow) -> BackfillRecord? {
        guard let b = r.text(1).flatMap(BuildID.init(hex:)) else { return nil }
        var rec = BackfillRecord(
            id: r.int(0), buildID: b, state: r.text(2) ?? "", stacks: r.int(3), occurrences: r.int(4),
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

    static func job(_ r: any SQLRow) -> BackfillJob? {
        guard let record = record(r) else { return nil }
        return BackfillJob(record: record, holder: r.text(13), leaseExpires: r.isNull(14) ? nil : r.double(14), resumeAfter: r.text(15))
    }
}

extension SQLBackedStore {
    public func backfills(limit: Int) throws -> [BackfillRecord] {
        try sqlBacking.database.reading { c in
            try c.rows(BackfillRows.select + " ORDER BY b.id DESC LIMIT ?", .int(Int64(limit)), map: BackfillRows.record).compactMap { $0 }
        }
    }

    public func latestBackfill(buildID: BuildID) throws -> BackfillRecord? {
        try sqlBacking.database.reading { c in
            try c.first(BackfillRows.select + " WHERE b.build_id = ? ORDER BY b.id DESC LIMIT 1", .text(buildID.hex), map: BackfillRows.record) ?? nil
        }
    }
}
