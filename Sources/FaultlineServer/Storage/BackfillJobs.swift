// Backfills as jobs in the store: queued once per build-id, taken by one node at a time under a
// lease on the store's clock, resumed by any node when the lease of a dead holder runs out.
import Foundation
import FaultlineProtocol

/// A backfill row as a job: its record, who holds it and until when, and how far it got.
public struct BackfillJob: Sendable {
    public var record: BackfillRecord
    /// The claimant running it (`Backfiller`'s holder string: random part, pid, role); nil when queued.
    public var holder: String?
    /// When the holder's lease runs out (the store's clock); a running job past it may be taken.
    public var leaseExpires: Double?
    /// The last stack key (in key order) whose occurrences were regrouped; a run that takes the job
    /// over continues after it.
    public var resumeAfter: String?
}

/// The feature store of backfills: the job operations (SQLite: one writer, so each is trivially
/// exclusive; PostgreSQL: `FOR UPDATE SKIP LOCKED` for the take, a lease column for liveness), the
/// records of past runs, and the stacks a run regroups.
public protocol BackfillJobs: AnyObject, Sendable {
    /// Queues a backfill of `buildID` unless one is already queued and not yet taken (an upload
    /// while its build-id's backfill runs queues a second run, which the first cannot cover).
    /// Returns the queued job's id.
    func enqueueBackfill(buildID: BuildID) throws -> Int64
    /// Takes the oldest job that is queued, or running under a lease that has run out, for
    /// `holder` until `lease` seconds from now. Nil when there is none.
    func claimBackfill(holder: String, lease: Double) throws -> BackfillJob?
    /// Extends `holder`'s lease on job `id`; false when the job is no longer `holder`'s.
    func renewBackfill(id: Int64, holder: String, lease: Double) throws -> Bool
    /// Writes the record's progress (and, when done or failed, its outcome) if `holder` still holds
    /// the job; returns whether it did. A finished job gives its lease up.
    func saveBackfill(_ record: BackfillRecord, resumeAfter: String?, holder: String) throws -> Bool
    /// The job with this id, nil if none.
    func backfillJob(id: Int64) throws -> BackfillJob?
    /// Jobs queued or running (whatever their lease), oldest first.
    func openBackfills() throws -> [BackfillJob]

    /// Stacks whose frames go through `buildID`, with how many occurrences each has per project.
    func stacks(referencing buildID: BuildID) throws -> [StoredStack]
    func createBackfill(buildID: BuildID) throws -> Int64
    func updateBackfill(_ record: BackfillRecord) throws
    func backfills(limit: Int) throws -> [BackfillRecord]
    /// The most recent backfill of a build-id (what `upload --wait` reports), nil if none ran.
    func latestBackfill(buildID: BuildID) throws -> BackfillRecord?
}
