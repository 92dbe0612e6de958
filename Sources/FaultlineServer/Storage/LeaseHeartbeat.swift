// Keeps a lease in the store alive: renews it every third of its length on a timer, and remembers
// when a renewal failed, so the holder can stop before doing work that is no longer its own.
import Foundation

final class LeaseHeartbeat: @unchecked Sendable {
    private let lock = NSLock()
    private var timer: DispatchSourceTimer?
    private var lost = false

    /// Starts renewing with `renew` (true: still held) every `lease / 3` seconds.
    init(lease: Double, renew: @escaping @Sendable () throws -> Bool) {
        let t = DispatchSource.makeTimerSource(queue: .global())
        t.schedule(deadline: .now() + lease / 3, repeating: lease / 3)
        t.setEventHandler { [weak self] in
            // A renewal that fails or errs counts as lost: the holder must not assume it still holds.
            if (try? renew()) != true, let self { self.lock.lock(); self.lost = true; self.lock.unlock() }
        }
        timer = t
        t.resume()
    }

    /// False once a renewal failed or the heartbeat was cancelled.
    var holds: Bool { lock.lock(); defer { lock.unlock() }; return !lost && timer != nil }

    func cancel() {
        lock.lock(); let t = timer; timer = nil; lock.unlock()
        t?.cancel()
    }
}
