// The store primitives retention is written over (Retention/): bounded deletions, each one
// transaction, that keep issue counts equal to the occurrences issues hold. No policy here: how
// old is too old and how much is too much is `Retention`'s business.
import Foundation
import FaultlineProtocol

/// A row the size cap may delete: a grouped occurrence or an item, with the bytes it stores
/// (what `retainedBytes()` counts for it).
public struct RetainedRow: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case occurrence, item }
    public var kind: Kind
    public var id: Int64
    public var received: Double
    public var bytes: Int64
    public init(kind: Kind, id: Int64, received: Double, bytes: Int64) {
        self.kind = kind; self.id = id; self.received = received; self.bytes = bytes
    }
}

public protocol RetentionStore: AnyObject, Sendable {
    /// Deletes at most `limit` grouped occurrences received before `cutoff` (oldest first) and
    /// recounts the issues that held them, in one transaction. Returns how many were deleted.
    /// Ungrouped occurrences are left for grouping (a later pass deletes them).
    func deleteOccurrences(receivedBefore cutoff: Double, limit: Int) throws -> Int
    /// Deletes at most `limit` items (sessions, logs, client reports) received before `cutoff`.
    /// Session totals (`ItemCounts.sessionsTotal`) are running counts and stay.
    func deleteItems(receivedBefore cutoff: Double, limit: Int) throws -> Int
    /// Deletes the grouped occurrences with these ids and recounts the issues that held them, in
    /// one transaction; an id that is gone or not grouped is skipped. Returns how many were deleted.
    func deleteOccurrences(ids: [Int64]) throws -> Int
    /// Deletes the items with these ids (one transaction); returns how many were deleted.
    func deleteItems(ids: [Int64]) throws -> Int
    /// Deletes at most `limit` stacks no occurrence points at any more, and their module rows:
    /// `buildIDs` reads the build-ids an encoded signature names (grouping's format, which the
    /// store does not read itself).
    func deleteOrphanedStacks(limit: Int, buildIDs: @escaping @Sendable (Data) -> Set<BuildID>) throws -> Int
    /// Bytes of stored events and item payloads (what the size cap counts; the database file
    /// itself does not shrink, it reuses the space).
    func retainedBytes() throws -> Int64
    /// The `limit` oldest rows the size cap may delete, grouped occurrences and items in one
    /// order: by time received, an occurrence before an item received at the same time, then by id.
    /// Ungrouped occurrences are not listed (grouping would count them).
    func oldestRetained(limit: Int) throws -> [RetainedRow]
}
