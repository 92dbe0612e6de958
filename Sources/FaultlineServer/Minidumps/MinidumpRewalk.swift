// The backfill of dumps: when a debug or executable file for a build-id arrives, every stored dump
// that loaded that module is walked again with it — its CFI can change the frames themselves, not
// only their names — and each occurrence whose event changed gets the new stacks and moves to the
// issue of its new crashing stack. One stored but not yet grouped is grouped here, by the new walk:
// the grouping worker's queued stack is the walk at ingest, and grouping takes an occurrence once.
// It runs inside the build-id's backfill job (Backfiller), before the stacks are re-symbolicated,
// holding the same "regrouping" claim, in batches of a few dumps (one transaction each, a resume
// point after each), so a pass is bounded and a job taken over by another node continues after the
// last dump done. Walking again with the same files gives the same event, which is then left as it
// is: a run repeated or resumed changes nothing twice.
import Foundation
import FaultlineProtocol

final class MinidumpRewalk: Sendable {
    let database: any SQLDatabase
    let store: any Store
    let walker: any MinidumpWalking
    /// Dumps walked per transaction: walking is the cost (every thread, with CFI), so batches are
    /// small and a stop or a lost lease waits for little.
    let batchSize: Int

    init(database: any SQLDatabase, store: any Store, walker: any MinidumpWalking, batchSize: Int = 16) {
        self.database = database
        self.store = store
        self.walker = walker
        self.batchSize = max(1, batchSize)
    }

    /// A backfill job's resume point inside this phase: `minidump:<occurrence id>` (stack keys,
    /// the other phase's resume points, are hex and never start so).
    static let resumePrefix = "minidump:"

    /// The occurrence id to continue after when `resume` is this phase's; nil when it is the stack
    /// phase's (this phase is done) or there is none (start from the first dump).
    static func resumeAfter(_ resume: String?) -> Int64? {
        guard let resume, resume.hasPrefix(resumePrefix) else { return nil }
        return Int64(resume.dropFirst(resumePrefix.count))
    }

    static func resumePoint(after occurrenceID: Int64) -> String { resumePrefix + String(occurrenceID) }

    /// Walks again every stored dump that loaded `buildID` after occurrence `after`; calls
    /// `committed` with the last occurrence id of each batch once it is written (it throws to stop
    /// the run). Returns the occurrences whose event changed.
    @discardableResult
    func run(buildID: BuildID, after: Int64, symbolicator: FrameSymbolicating, committed: (Int64) throws -> Void) throws -> Int {
        var last = after
        var changed = 0
        let grouping = Dictionary(try store.projects().map { ($0.id, $0.groupingConfig) }, uniquingKeysWith: { a, _ in a })
        while true {
            let ids = try SQLMinidumpRecords.occurrences(database, referencing: buildID, after: last, limit: batchSize)
            guard let end = ids.last else { return changed }
            let rewalked = try PhaseClock.time(.minidumpRewalk, count: ids.count) {
                try ids.compactMap { try rewalk($0, grouping: grouping, symbolicator: symbolicator) }
            }
            let (moved, toGroup) = try SQLMinidumpRecords.apply(database, rewalked)
            // Stored before the file arrived and not grouped yet: grouped now, by this walk.
            try store.recordGrouping(toGroup)
            changed += moved + toGroup.count
            last = end
            try committed(last)
        }
    }

    /// The dump of one occurrence walked again; nil when its event comes out as it is stored (or
    /// the dump cannot be read now, which ingest would have refused: the event stays).
    func rewalk(_ occurrenceID: Int64, grouping: [Int64: GroupingConfig], symbolicator: FrameSymbolicating) throws -> SQLMinidumpRecords.Rewalked? {
        guard let stored = try SQLMinidumpRecords.dump(database, occurrenceID: occurrenceID),
            let walked = try? walker.walk(stored.dump),
            let before = try? StoredEvent.decode(stored.event)
        else { return nil }
        let event = MinidumpEventMerge.merge(base: before, walked: walked.event)
        guard event != before else { return nil }
        let bytes = event.serialized()
        let stack = StackExtractor.signature(of: event, grouping: grouping[stored.projectID] ?? .newProjects)
        let (encoded, key) = stack.encodedWithKey
        return SQLMinidumpRecords.Rewalked(
            occurrenceID: occurrenceID, projectID: stored.projectID, grouped: stored.grouped, timestamp: stored.timestamp, release: stored.release,
            storedEvent: StoredEvent.encode(eventBytes: bytes, gzipBody: nil, inflatedBytes: bytes.count),
            stack: stack, stackEncoded: encoded, stackKey: key,
            fingerprint: Fingerprinter.fingerprint(stack, symbolicator: symbolicator), environment: EventFields.environment(event))
    }
}
