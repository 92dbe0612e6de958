// Start's background half: what it found, and the rendezvous for whoever needs it finished.
import FaultlineCrashPickup
import Foundation
import Synchronization

/// `Faultline.start` returns once the crash handler is installed (and the context it needs is
/// set); the outbox scan, the pickup of earlier crash reports, the install-id file and the
/// network set-up run afterwards on the crash core's background preparation thread. Whoever needs
/// their result waits here, bounded: a reader of the outbox until it exists, `StartResult.pickup`
/// and `.warnings`, `flush`, `close` and the exit hook until everything has run. Waiting is rare
/// (something right after start); the common path is one atomic load.
final class StartPreparation: @unchecked Sendable {
    private let condition = NSCondition()
    private let outboxSettled = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)
    private var pickup = CrashPickup()  // under `condition`
    private var warnings: [String] = []

    var isDone: Bool { done.load(ordering: .acquiring) }

    /// The outbox exists (or could not be made): its readers may go on.
    func settleOutbox() {
        condition.lock()
        outboxSettled.store(true, ordering: .releasing)
        condition.broadcast()
        condition.unlock()
    }

    func finish(pickup: CrashPickup, warnings: [String]) {
        condition.lock()
        self.pickup = pickup
        self.warnings = warnings
        outboxSettled.store(true, ordering: .releasing)
        done.store(true, ordering: .releasing)
        condition.broadcast()
        condition.unlock()
    }

    func waitForOutbox(timeout: Double) {
        if outboxSettled.load(ordering: .acquiring) { return }
        wait(timeout: timeout) { self.outboxSettled.load(ordering: .acquiring) }
    }

    /// What the background half found, or nil if it has not finished within `timeout` seconds.
    func result(timeout: Double) -> (pickup: CrashPickup, warnings: [String])? {
        wait(timeout: timeout) { self.isDone }
        condition.lock()
        defer { condition.unlock() }
        return isDone ? (pickup, warnings) : nil
    }

    private func wait(timeout: Double, until ready: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while !ready() { if !condition.wait(until: deadline) { break } }
        condition.unlock()
    }
}
