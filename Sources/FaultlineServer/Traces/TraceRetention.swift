// Retention by age for traces: a sweeper that deletes transactions (and their spans) received
// longer ago than the configured number of days. Occurrences are never deleted by it.
import FaultlineThreads
import Foundation

public final class TraceRetention: @unchecked Sendable {
    /// Nil: no traces are kept, so there is nothing to sweep.
    let traces: (any TraceStore)?
    let maxAge: TimeInterval
    let interval: TimeInterval
    /// The sweeper thread; its state is when the next sweep is due.
    private let sweeper = WorkerThread(name: "faultline-trace-retention", state: Date.distantPast)

    /// `days <= 0` keeps traces forever.
    public init(traces: (any TraceStore)?, days: Double, interval: TimeInterval = 3600) {
        self.traces = traces
        self.maxAge = days * 86_400
        self.interval = interval
    }

    /// Deletes what is older than the retention now; returns the transactions deleted.
    @discardableResult
    public func sweep(now: Double = Date().timeIntervalSince1970) throws -> Int {
        guard maxAge > 0, let traces else { return 0 }
        return try traces.deleteTransactions(receivedBefore: now - maxAge)
    }

    public func start() {
        guard maxAge > 0 else { return }
        // A sweep at start, then one every `interval` after the previous one ended.
        sweeper.start { [self] due, stopping in
            if stopping { return .exit }
            if Date() < due { return .wait(until: due) }
            due = .distantFuture
            return .run { [self] in
                _ = try? sweep()
                sweeper.update { $0 = Date().addingTimeInterval(interval) }
            }
        }
    }

    public func stop() {
        sweeper.requestStop()
    }
}
