// Retention for events and items: in the background, occurrences and items older than the
// configured age go, then the oldest until the stored bytes are within the cap, then stacks no
// occurrence points at any more. Every deletion is a bounded batch in its own transaction, taken
// under the "regrouping" claim, so grouping and backfill never see a half-recounted issue and
// issue counts stay equal to the occurrences they hold. On several nodes, one sweeps at a time
// (the "retention" claim); the others skip that round. Expired install-cap windows go too.
import Foundation
import FaultlineThreads

/// How long events and items are kept, and how many bytes of them at most (`faultline serve
/// --retention-days`, `--retention-max-bytes`). Zero: no limit of that kind.
public struct RetentionLimits: Sendable {
    public var maxAgeDays: Double = 0
    public var maxTotalBytes: Int64 = 0
    /// Seconds between two sweeps.
    public var interval: Double = 600
    /// Rows per transaction: bounds how long one deletion holds grouping off.
    public var batch = 500
    public init() {}
    public var isEnabled: Bool { maxAgeDays > 0 || maxTotalBytes > 0 }
}

/// What one sweep deleted.
public struct RetentionSweep: Sendable, Equatable {
    public var occurrences = 0
    public var items = 0
    public var stacks = 0
}

public final class Retention: @unchecked Sendable {
    /// The claims (core store), the deletions, and the install-cap windows that expire.
    let store: any Store
    let rows: any RetentionStore
    let installWindows: any InstallWindows
    let limits: RetentionLimits
    let regrouping: StoreClaim
    let sweeper: StoreClaim
    /// The sweeping thread; its state is when the next sweep is due.
    private let worker = WorkerThread(name: "faultline-retention", state: Date.distantPast)

    /// Install-cap windows older than this are expired: each sweep deletes them.
    let installWindowSeconds: Double

    public init(stores: Stores, limits: RetentionLimits, installWindowSeconds: Double = 3600) {
        let store = stores.core
        self.store = store
        self.rows = stores.retention
        self.installWindows = stores.installWindows
        self.limits = limits
        self.installWindowSeconds = installWindowSeconds
        regrouping = StoreClaim(store: store, role: "retention")
        sweeper = StoreClaim(store: store, name: "retention", role: "retention")
    }

    /// Runs one sweep now (this node, whether or not another node sweeps too: the work is
    /// idempotent, the claim only avoids doing it twice). Bounded by the rows there are to delete.
    @discardableResult
    public func sweep(now: Double = Date().timeIntervalSince1970) throws -> RetentionSweep {
        var done = RetentionSweep()
        let batch = max(1, limits.batch)
        if limits.maxAgeDays > 0 {
            let cutoff = now - limits.maxAgeDays * 86_400
            done.occurrences += try repeatBatches { try self.rows.deleteOccurrences(receivedBefore: cutoff, limit: batch) }
            done.items += try repeatBatches { try self.rows.deleteItems(receivedBefore: cutoff, limit: batch) }
        }
        if limits.maxTotalBytes > 0 {
            let (occurrences, items) = try sweepOverCap(batch: batch)
            done.occurrences += occurrences
            done.items += items
        }
        // Stacks lose their last occurrence only to deletions like the ones above.
        if limits.isEnabled {
            done.stacks += try repeatBatches { try self.rows.deleteOrphanedStacks(limit: batch) { StackSignature.decode($0)?.buildIDs ?? [] } }
        }
        // Expired install-cap windows (no claim needed: nothing else reads an expired window).
        while !isStopping, try installWindows.deleteInstallWindows(startedBefore: now - installWindowSeconds, limit: batch) > 0 {}
        return done
    }

    /// While the stored bytes exceed the cap: the oldest rows of both kinds, in one order, just
    /// enough of them that the bytes they free bring the total to the cap or under it — never a
    /// whole batch regardless (that deleted all 300 events of 1.42 MiB under a 1 MiB cap).
    /// The total is measured again before each batch, so rows stored meanwhile count too.
    private func sweepOverCap(batch: Int) throws -> (occurrences: Int, items: Int) {
        var done = (occurrences: 0, items: 0)
        while !isStopping {
            var excess = try rows.retainedBytes() - limits.maxTotalBytes
            guard excess > 0 else { break }
            var occurrences: [Int64] = [], items: [Int64] = []
            for row in try rows.oldestRetained(limit: batch) {
                guard excess > 0 else { break }
                excess -= row.bytes
                if row.kind == .occurrence { occurrences.append(row.id) } else { items.append(row.id) }
            }
            let o = occurrences.isEmpty ? 0 : try holdingGrouping { try self.rows.deleteOccurrences(ids: occurrences) }
            let i = try rows.deleteItems(ids: items)
            // Nothing left that may go (ungrouped occurrences wait for grouping): stop here.
            if o + i == 0 { break }
            done.occurrences += o
            done.items += i
        }
        return done
    }

    private var isStopping: Bool { worker.isStopping }

    private func holdingGrouping(_ body: () throws -> Int) throws -> Int { try regrouping.holding(body) }

    /// Runs `body` (one bounded transaction) under the regrouping claim until it deletes nothing.
    private func repeatBatches(_ body: () throws -> Int) throws -> Int {
        var total = 0
        while !isStopping {
            let n = try holdingGrouping(body)
            total += n
            if n == 0 { break }
        }
        return total
    }

    /// Sweeps every `limits.interval` seconds; without age or size limits, only expired
    /// install-cap windows go.
    public func start() {
        worker.start { [self] due, stopping in
            if stopping { return .exit }
            let now = Date()
            guard now >= due else { return .wait(until: due) }
            due = now.addingTimeInterval(limits.interval)
            return .run { [self] in
                guard (try? store.acquireClaim(sweeper.name, holder: sweeper.holder, duration: limits.interval)) == true else { return }
                do { try sweep() } catch {
                    FileHandle.standardError.write(Data("faultline: retention sweep failed: \(error)\n".utf8))
                }
            }
        }
    }

    /// Stops after the current batch.
    public func stop() { _ = worker.stop() }
}
