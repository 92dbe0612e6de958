// One claimant's hold on a named claim in the store (`Store.acquireClaim`): grouping and backfill
// each have one on "regrouping", so neither runs while the other does — on this node or on any
// other node sharing the database. A process-local lock would only exclude this process's threads.
import Foundation
import Synchronization

public final class StoreClaim: Sendable {
    /// The claim grouping and backfill share: no occurrence is grouped with stale symbols while
    /// backfill moves stacks, and issue counts stay exact while backfill merges.
    public static let regrouping = "regrouping"

    public enum ClaimError: Error, CustomStringConvertible {
        case lost(name: String)
        public var description: String {
            switch self {
            case .lost(let name): return "the \(name) claim expired and another server took it; the run stopped and will be repeated"
            }
        }
    }

    let store: any Store
    let name: String
    /// Unique per claimant: a random part, plus process and role for people reading the row.
    let holder: String
    /// How long a hold lasts unless renewed. While held, a heartbeat renews it every third of
    /// that, so a long backfill keeps it and a node killed mid-run frees it within one lease
    /// (which is also how long a restarted server's grouping may wait after a kill -9).
    let lease: Double
    /// How often a waiting claimant asks again.
    let poll: Double
    private let heartbeat = Mutex<LeaseHeartbeat?>(nil)

    public init(store: any Store, name: String = StoreClaim.regrouping, role: String, lease: Double = 6, poll: Double = 0.005) {
        self.store = store
        self.name = name
        self.lease = lease
        self.poll = poll
        holder = "\(UUID().uuidString):\(ProcessInfo.processInfo.processIdentifier):\(role)"
    }

    /// Waits until the claim is this claimant's, then keeps it renewed until `release`.
    /// Throws what the store throws.
    public func acquire() throws {
        while try !store.acquireClaim(name, holder: holder, duration: lease) {
            Thread.sleep(forTimeInterval: poll)
        }
        let (store, name, holder, lease) = (self.store, self.name, self.holder, self.lease)
        let beat = LeaseHeartbeat(lease: lease) { try store.renewClaim(name, holder: holder, duration: lease) }
        heartbeat.withLock { $0 = beat }
    }

    /// Throws `ClaimError.lost` when the hold lapsed (the heartbeat could not renew it, so another
    /// claimant may have it). Long runs call this between steps that must not overlap.
    public func check() throws {
        let beat = heartbeat.withLock { $0 }
        if beat?.holds != true { throw ClaimError.lost(name: name) }
    }

    /// Gives the claim up (best effort: a hold that cannot be released expires).
    public func release() {
        let beat = heartbeat.withLock { $0.take() }
        beat?.cancel()
        try? store.releaseClaim(name, holder: holder)
    }

    /// Runs `body` holding the claim.
    public func holding<T>(_ body: () throws -> T) throws -> T {
        try acquire()
        defer { release() }
        return try body()
    }
}
