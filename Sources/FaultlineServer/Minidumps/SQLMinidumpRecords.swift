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
        var grouped: Bool
        var timestamp: Double
        var release: String?
        var event: Data
        var dump: Data
    }

    /// Occurrences from a dump that loaded `buildID`, after `occurrenceID`, oldest first, grouped
    /// or not.
    static func occurrences(_ db: any SQLDatabase, referencing buildID: BuildID, after occurrenceID: Int64, limit: Int) throws -> [Int64] {
        try db.reading { c in
            try c.rows(
                """
                SELECT occurrence_id FROM minidump_modules WHERE build_id = ? AND occurrence_id > ? ORDER BY occurrence_id LIMIT ?
                """, .text(buildID.hex), .int(occurrenceID), .int(Int64(limit))
            ) { $0.int(0) }
        }
    }

    /// The occurrence's stored event and its dump (its first `event.minidump` attachment).
    static func dump(_ db: any SQLDatabase, occurrenceID: Int64) throws -> StoredDump? {
        try db.reading { c in
            try c.first(
                """
                SELECT o.project_id, o.processed, o.timestamp, o.release, o.event, a.data FROM occurrences o
                JOIN attachments a ON a.occurrence_id = o.id AND a.attachment_type = ?
                WHERE o.id = ? ORDER BY a.id LIMIT 1
                """, .text(MinidumpUpload.attachmentType), .int(occurrenceID)
            ) {
                StoredDump(
                    occurrenceID: occurrenceID, projectID: $0.int(0), grouped: $0.int(1) != 0, timestamp: $0.double(2), release: $0.text(3),
                    event: $0.blob(4), dump: $0.blob(5))
            }
        }
    }

    /// What a new walk of one dump changed: the event to store, its stack and that stack's issue.
    struct Rewalked {
        var occurrenceID: Int64
        var projectID: Int64
        /// Grouped already (its issue moves here), or waiting for the grouping worker (grouped
        /// here, by the new walk: the worker's queued stack is the walk at ingest).
        var grouped: Bool
        var timestamp: Double
        var release: String?
        var storedEvent: Data
        var stack: StackSignature
        var stackEncoded: Data
        var stackKey: String
        var fingerprint: Fingerprint
        var environment: String

        var groupingOutcome: GroupingOutcome {
            GroupingOutcome(
                occurrenceID: occurrenceID, projectID: projectID, stack: stack, stackEncoded: stackEncoded, stackKey: stackKey,
                fingerprint: fingerprint, timestamp: timestamp, release: release, environment: environment)
        }
    }

    /// Writes the new events and stacks and moves each grouped occurrence to the issue of its new
    /// stack (IssueMerger's policy, in the same transaction: an issue the move empties is renamed
    /// or merged, never left empty). Returns how many grouped occurrences were rewritten, and the
    /// ungrouped ones whose event was rewritten, for the caller to group (`Store.recordGrouping`,
    /// which groups an occurrence once: the worker's own try later finds it grouped).
    static func apply(_ db: any SQLDatabase, _ rewalked: [Rewalked]) throws -> (moved: Int, toGroup: [GroupingOutcome]) {
        guard !rewalked.isEmpty else { return (0, []) }
        let dialect = db.dialect
        return try db.writing { c in
            var moves: [String: Regrouping] = [:]
            var written = 0
            var toGroup: [GroupingOutcome] = []
            for r in rewalked where !r.grouped {
                if try c.execute("UPDATE occurrences SET event = ? WHERE id = ? AND processed = 0", .blob(r.storedEvent), .int(r.occurrenceID)) > 0 {
                    toGroup.append(r.groupingOutcome)
                }
            }
            for r in rewalked where r.grouped {
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
            return (written, toGroup)
        }
    }
}
