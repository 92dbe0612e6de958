// The statements of minidump ingest and of walking a stored dump again, written once for both
// stores over `SQLDatabase`: ingest inserts a dump's modules in its own transaction
// (`storeIngest`); the backfill reads the dumps that loaded a build-id and writes what a new walk
// changed, with the occurrence's move to its new issue, in one transaction per batch.
import Foundation
import FaultlineProtocol

enum SQLMinidumpRecords {
    static let insertModuleSQL = "INSERT INTO minidump_modules(build_id, occurrence_id) VALUES(?, ?) ON CONFLICT DO NOTHING"

    /// A stored dump with what its walk again needs.
    struct StoredDump {
        var occurrenceID: Int64
        var projectID: Int64
        var stackKey: String?
        var event: Data
        var dump: Data
    }

    /// Grouped occurrences from a dump that loaded `buildID`, after `occurrenceID`, oldest first.
    /// (An ungrouped one is left to the grouping worker, which is about to read its event.)
    static func occurrences(_ db: any SQLDatabase, referencing buildID: BuildID, after occurrenceID: Int64, limit: Int) throws -> [Int64] {
        try db.reading { c in
            try c.rows(
                """
                SELECT m.occurrence_id FROM minidump_modules m JOIN occurrences o ON o.id = m.occurrence_id
                WHERE m.build_id = ? AND m.occurrence_id > ? AND o.processed = 1 ORDER BY m.occurrence_id LIMIT ?
                """, .text(buildID.hex), .int(occurrenceID), .int(Int64(limit))
            ) { $0.int(0) }
        }
    }

    /// The occurrence's stored event and its dump (its first `event.minidump` attachment).
    static func dump(_ db: any SQLDatabase, occurrenceID: Int64) throws -> StoredDump? {
        try db.reading { c in
            try c.first(
                """
                SELECT o.project_id, o.stack_key, o.event, a.data FROM occurrences o
                JOIN attachments a ON a.occurrence_id = o.id AND a.attachment_type = ?
                WHERE o.id = ? ORDER BY a.id LIMIT 1
                """, .text(MinidumpUpload.attachmentType), .int(occurrenceID)
            ) { StoredDump(occurrenceID: occurrenceID, projectID: $0.int(0), stackKey: $0.text(1), event: $0.blob(2), dump: $0.blob(3)) }
        }
    }

    /// What a new walk of one dump changed: the event to store, its stack and that stack's issue.
    struct Rewalked {
        var occurrenceID: Int64
        var projectID: Int64
        var storedEvent: Data
        var stack: StackSignature
        var stackEncoded: Data
        var stackKey: String
        var fingerprint: Fingerprint
        var environment: String
    }

    /// Writes the new events and stacks and moves each occurrence to the issue of its new stack
    /// (IssueMerger's policy, in the same transaction: an issue the move empties is renamed or
    /// merged, never left empty). Returns how many occurrences were rewritten.
    static func apply(_ db: any SQLDatabase, _ rewalked: [Rewalked]) throws -> Int {
        guard !rewalked.isEmpty else { return 0 }
        let dialect = db.dialect
        return try db.writing { c in
            var moves: [String: Regrouping] = [:]
            var written = 0
            for r in rewalked {
                guard
                    try c.execute(
                        "UPDATE occurrences SET event = ?, stack_key = ? WHERE id = ? AND processed = 1", .blob(r.storedEvent), .text(r.stackKey),
                        .int(r.occurrenceID)) > 0
                else { continue }
                written += 1
                if try c.execute("INSERT INTO stacks(key, signature) VALUES(?, ?) ON CONFLICT DO NOTHING", .text(r.stackKey), .blob(r.stackEncoded)) > 0 {
                    for b in r.stack.buildIDs.sorted(by: { $0.hex < $1.hex }) {
                        try c.execute("INSERT INTO stack_modules(build_id, stack_key) VALUES(?, ?) ON CONFLICT DO NOTHING", .text(b.hex), .text(r.stackKey))
                    }
                }
                try c.execute(GroupingOutcome.environmentPairSQL, .text(r.environment), .text(r.stackKey))
                moves["\(r.projectID) \(r.stackKey)"] = Regrouping(stackKey: r.stackKey, projectID: r.projectID, fingerprint: r.fingerprint)
            }
            _ = try IssueMerger.apply(moves.keys.sorted().compactMap { moves[$0] }, SQLIssueEditing(c: c, dialect: dialect))
            return written
        }
    }
}
