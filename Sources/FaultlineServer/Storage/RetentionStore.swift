// The store primitives retention is written over (Retention/): bounded deletions, each one
// transaction, that keep issue counts equal to the occurrences issues hold. No policy here: how
// old is too old and how much is too much is `Retention`'s business.
import Foundation

public protocol RetentionStore: AnyObject {
    /// Deletes at most `limit` grouped occurrences received before `cutoff` (oldest first) and
    /// recounts the issues that held them, in one transaction. Returns how many were deleted.
    /// Ungrouped occurrences are left for grouping (a later pass deletes them).
    func deleteOccurrences(receivedBefore cutoff: Double, limit: Int) throws -> Int
    /// Deletes at most `limit` items (sessions, logs, client reports) received before `cutoff`.
    /// Session totals (`ItemCounts.sessionsTotal`) are running counts and stay.
    func deleteItems(receivedBefore cutoff: Double, limit: Int) throws -> Int
    /// Deletes at most `limit` stacks no occurrence points at any more (and their module rows).
    func deleteOrphanedStacks(limit: Int) throws -> Int
    /// Bytes of stored events and item payloads (what the size cap counts; the database file
    /// itself does not shrink, it reuses the space).
    func retainedBytes() throws -> Int64
    /// The received time of the `n`-th oldest (1-based) grouped occurrence and of the `n`-th
    /// oldest item; nil where there are fewer.
    func nthOldestReceived(_ n: Int) throws -> (occurrence: Double?, item: Double?)
}
