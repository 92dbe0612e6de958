// Keeps a lease in the store alive: renews it every third of its length on a timer, and remembers
// when a renewal failed, so the holder can stop before doing work that is no longer its own.
import Foundation
import Synchronization

final class LeaseHeartbeat: Sendable {
    private struct State {
        var lost = false
        var cancelled = false
    }
    private let state = Mutex(State())
    /// Dispatch sources are thread-safe; the type is only not marked Sendable.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    /// Starts renewing with `renew` (true: still held) every `lease / 3` seconds.
    init(lease: Double, renew: @escaping @Sendable () throws -> Bool) {
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + lease / 3, repeating: lease / 3)
        timer.setEventHandler { [weak self] in
            // A renewal that fails or errs counts as lost: the holder must not assume it still holds.
            if (try? renew()) != true, let self { self.state.withLock { $0.lost = true } }
        }
        timer.resume()
    }

    /// False once a renewal failed or the heartbeat was cancelled.
    var holds: Bool { state.withLock { !$0.lost && !$0.cancelled } }

    func cancel() {
        let first = state.withLock { s in
            defer { s.cancelled = true }
            return !s.cancelled
        }
        if first { timer.cancel() }
    }
}
