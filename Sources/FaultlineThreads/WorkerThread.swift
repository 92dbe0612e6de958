// The one background-worker rule of the SDK and the server: a thread that waits for work or a
// deadline, runs the work outside the lock, stops on request and can be joined.
//
// The caller's queue lives in `State`, guarded by the worker's lock, so "is there work?", "take
// it" and "should I stop?" are decided in one place (`next`) under one lock, and a producer's
// `update` both changes the state and wakes the thread. `next` never blocks; what it returns says
// what the thread does: run a closure (outside the lock), sleep until woken or a deadline, or end.
import Foundation
import Synchronization

/// A background thread driven by a decision function over state held under its lock.
///
/// Contract: `next(&state, stopping)` runs on the worker thread with the lock held and returns
/// at once; what it changed wakes everyone in `wait(until:for:)`. `.run(work)` runs `work` without
/// the lock, wakes the waiters again and asks `next` again; `.wait(until:)` sleeps until `update`,
/// `wake`, a stop request or the deadline (nil: no deadline), then asks again; `.exit` ends the
/// thread, and `join` returns.
/// Once a stop is requested, `next` sees `stopping == true`; what still runs before `.exit`
/// (a final drain, or nothing) is the caller's rule, but it must not `.wait` without a deadline.
public final class WorkerThread<State>: @unchecked Sendable {
    public enum Step {
        /// Run this outside the lock, then decide again.
        case run(() -> Void)
        /// Sleep until woken, a stop request, or the deadline (nil: until woken).
        case wait(until: Date?)
        /// End the thread.
        case exit
    }

    public let name: String
    private let condition = NSCondition()
    private var state: State
    private var stopRequested = false
    private var started = false
    private var exited = false
    /// True while the thread sleeps in `.wait`, so producers on hot paths can skip the lock.
    private let sleeping = Atomic<Bool>(false)

    public init(name: String, state: State) {
        self.name = name
        self.state = state
    }

    /// Starts the thread: `prepare` runs on it first (signal mask, set-up), then the loop.
    public func start(prepare: (@Sendable () -> Void)? = nil, next: @escaping (inout State, _ stopping: Bool) -> Step) {
        nonisolated(unsafe) let decide = next
        condition.lock(); started = true; condition.unlock()
        let t = Thread { [self] in
            prepare?()
            loop(decide)
        }
        t.name = name
        t.start()
    }

    private func loop(_ next: (inout State, Bool) -> Step) {
        condition.lock()
        while true {
            // Set before `next` looks for work: a producer that sees `sleeping == false` has
            // queued its work before `next` runs, or `next` will see it.
            sleeping.store(true, ordering: .sequentiallyConsistent)
            let step = next(&state, stopRequested)
            // What `next` changed (a job taken, a flag) is visible to `wait(until:for:)` callers now.
            condition.broadcast()
            switch step {
            case .run(let work):
                sleeping.store(false, ordering: .sequentiallyConsistent)
                condition.unlock()
                work()
                condition.lock()
                condition.broadcast()
            case .wait(let deadline):
                // `next` saw the stop flag under this lock, so a stop cannot slip in unseen.
                if let deadline { _ = condition.wait(until: deadline) } else { condition.wait() }
                sleeping.store(false, ordering: .sequentiallyConsistent)
            case .exit:
                sleeping.store(false, ordering: .sequentiallyConsistent)
                exited = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    /// Changes the state under the lock and wakes the thread (and anyone in `wait(until:for:)`).
    @discardableResult
    public func update<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        return try body(&state)
    }

    /// Changes the state under the lock and wakes the thread only when `wakes` says the changed
    /// state needs it now. For producers on a hot path whose change the thread's current `.wait`
    /// deadline covers anyway: each wake-up of a sleeping thread is a futex call and a context
    /// switch. `wakes` must say yes for every change that can end a wait without a deadline
    /// (a first job for a thread idle until woken), and no `wait(until:for:)` caller may wait for
    /// what a skipped change alone decides.
    @discardableResult
    public func update<R>(wakingIf wakes: (State) -> Bool, _ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            if wakes(state) { condition.broadcast() }
            condition.unlock()
        }
        return try body(&state)
    }

    /// Reads the state under the lock without waking anyone.
    public func read<R>(_ body: (State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body(state)
    }

    /// Wakes the thread so `next` decides again (its state unchanged).
    public func wake() {
        condition.lock(); condition.broadcast(); condition.unlock()
    }

    /// Wakes the thread only if it sleeps now: one atomic load on the caller's path. A wake-up
    /// lost to the race with a thread about to sleep costs that thread its deadline, so use it
    /// only with a `.wait` deadline.
    public func wakeIfSleeping() {
        if sleeping.load(ordering: .sequentiallyConsistent) { wake() }
    }

    /// Blocks the caller until `predicate(state)` holds, or the deadline passes (nil: no deadline).
    /// Re-checked after every step the thread runs and every `update`. True if it held.
    public func wait(until deadline: Date?, for predicate: (State) -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !predicate(state) {
            if let deadline {
                if !condition.wait(until: deadline) { return predicate(state) }
            } else {
                condition.wait()
            }
        }
        return true
    }

    /// Whether a stop was requested.
    public var isStopping: Bool { condition.lock(); defer { condition.unlock() }; return stopRequested }

    /// Asks the thread to stop (after `body` changes the state, under the same lock) and returns
    /// at once; `next` decides what still runs before it ends.
    public func requestStop(_ body: (inout State) -> Void = { _ in }) {
        condition.lock()
        stopRequested = true
        body(&state)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the thread has ended (nil: no limit). True at once for a thread never started.
    @discardableResult
    public func join(timeout: Double? = nil) -> Bool {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        return waitForExit(deadline)
    }

    private func waitForExit(_ deadline: Date?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while started && !exited {
            if let deadline {
                if !condition.wait(until: deadline) { return exited }
            } else {
                condition.wait()
            }
        }
        return true
    }

    /// `requestStop` then `join`.
    @discardableResult
    public func stop(timeout: Double? = nil) -> Bool {
        requestStop()
        return join(timeout: timeout)
    }
}

extension WorkerThread where State == Void {
    public convenience init(name: String) { self.init(name: name, state: ()) }
}
