// Retention by age for traces: a sweeper that deletes transactions (and their spans) received
// longer ago than the configured number of days. Occurrences are never deleted by it.
import Foundation

public final class TraceRetention: @unchecked Sendable {
    let store: Store
    let maxAge: TimeInterval
    let interval: TimeInterval
    private let cond = NSCondition()
    private var stopping = false
    private var thread: Thread?

    /// `days <= 0` keeps traces forever.
    public init(store: Store, days: Double, interval: TimeInterval = 3600) {
        self.store = store
        self.maxAge = days * 86_400
        self.interval = interval
    }

    /// Deletes what is older than the retention now; returns the transactions deleted.
    @discardableResult
    public func sweep(now: Double = Date().timeIntervalSince1970) throws -> Int {
        guard maxAge > 0, let traces = store as? TraceStore else { return 0 }
        return try traces.deleteTransactions(receivedBefore: now - maxAge)
    }

    public func start() {
        guard maxAge > 0 else { return }
        let t = Thread { [self] in
            while true {
                _ = try? sweep()
                cond.lock()
                if !stopping { _ = cond.wait(until: Date().addingTimeInterval(interval)) }
                let done = stopping
                cond.unlock()
                if done { return }
            }
        }
        t.name = "faultline-trace-retention"
        thread = t
        t.start()
    }

    public func stop() {
        cond.lock(); stopping = true; cond.signal(); cond.unlock()
    }
}
