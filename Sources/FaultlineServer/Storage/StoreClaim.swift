// One claimant's hold on a named claim in the store (`Store.acquireClaim`): backfill and retention
// hold "regrouping" exclusively, every node's grouping holds a share of it (`ClaimShare`), so
// groupings run side by side on every node while none runs beside a backfill — on this node or on
// any other node sharing the database. A process-local lock would only exclude this process's threads.
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

    /// Exclusive: the claim's one holder. Shared: one of any number of holders, excluding (and
    /// excluded by) an exclusive one.
    public enum Mode: Sendable { case exclusive, shared }

    let store: any Store
    let name: String
    let mode: Mode
    /// Unique per claimant: a random part, plus process and role for people reading the row.
    let holder: String
    /// How long a hold lasts unless renewed. While held, a heartbeat renews it every third of
    /// that, so a long backfill keeps it and a node killed mid-run frees it within one lease
    /// (which is also how long a restarted server's grouping may wait after a kill -9).
    let lease: Double
    /// How often a waiting claimant asks again.
    let poll: Double
    private let heartbeat = Mutex<LeaseHeartbeat?>(nil)

    public init(
        store: any Store, name: String = StoreClaim.regrouping, mode: Mode = .exclusive, role: String, lease: Double = 6, poll: Double = 0.005
    ) {
        self.store = store
        self.name = name
        self.mode = mode
        self.lease = lease
        self.poll = poll
        holder = "\(UUID().uuidString):\(ProcessInfo.processInfo.processIdentifier):\(role)"
    }

    /// Waits until the claim is this claimant's, then keeps it renewed until `release`.
    /// Throws what the store throws.
    public func acquire() throws {
        do {
            while try !take() { Thread.sleep(forTimeInterval: poll) }
        } catch {
            // An exclusive claimant may hold the row while waiting for shares: give it up.
            try? store.releaseClaim(row, holder: holder)
            throw error
        }
        let (store, row, holder, lease) = (self.store, self.row, self.holder, self.lease)
        let beat = LeaseHeartbeat(lease: lease) { try store.renewClaim(row, holder: holder, duration: lease) }
        heartbeat.withLock { $0 = beat }
    }

    private func take() throws -> Bool {
        switch mode {
        case .exclusive: return try store.acquireClaim(name, holder: holder, duration: lease)
        case .shared: return try store.acquireSharedClaim(name, holder: holder, duration: lease)
        }
    }

    /// The `claims` row this claimant's hold is: the claim's own, or its share's.
    private var row: String { mode == .exclusive ? name : ClaimShare.rowName(claim: name, holder: holder) }

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
        try? store.releaseClaim(row, holder: holder)
    }

    /// Runs `body` holding the claim.
    public func holding<T>(_ body: () throws -> T) throws -> T {
        try acquire()
        defer { release() }
        return try body()
    }
}
