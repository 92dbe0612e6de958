// Several workers taking jobs from one queue, first free first: a short job never waits behind a
// long one while another worker is free. Each worker is a `WorkerThread`, so waiting, stopping and
// joining follow the one worker rule; the shared queue is a `Mutex` beside them.
import Foundation
import Synchronization

/// A fixed number of `WorkerThread`s running `run(job)` for jobs in submission order.
///
/// Contract: `submit` never blocks on a job; a job runs on exactly one worker. `stop` drops the
/// jobs not yet started (it returns them, so the caller can undo what queuing them promised),
/// lets the running ones finish and joins every worker. A job submitted after `stop` is returned
/// by `submit` as refused.
public final class WorkerPool<Job: Sendable>: Sendable {
    private struct Queue {
        var jobs: [Job] = []
        var stopped = false
    }
    private let queue = Mutex(Queue())
    private let workers: [WorkerThread<Void>]

    public init(name: String, workers: Int) {
        self.workers = (0..<max(1, workers)).map { WorkerThread(name: "\(name)-\($0)") }
    }

    /// Starts the workers: `prepare` runs first on each (priority, signal mask), then `run` for
    /// each job it takes.
    public func start(prepare: (@Sendable () -> Void)? = nil, run: @escaping @Sendable (Job) -> Void) {
        for worker in workers {
            worker.start(prepare: prepare) { [self] _, stopping in
                if stopping { return .exit }
                guard let job = queue.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { return .wait(until: nil) }
                return .run { run(job) }
            }
        }
    }

    /// Queues `job` for the first free worker; false (nothing queued) once `stop` has begun.
    @discardableResult
    public func submit(_ job: Job) -> Bool {
        let queued = queue.withLock { q in
            guard !q.stopped else { return false }
            q.jobs.append(job)
            return true
        }
        // Each worker decides under its own lock, and waits under it: a wake after the append
        // reaches a worker that found the queue empty, or that worker sees the job.
        if queued { for worker in workers { worker.wake() } }
        return queued
    }

    /// Jobs queued and not yet taken by a worker.
    public var queuedCount: Int { queue.withLock { $0.jobs.count } }

    /// Drops the queued jobs (returned), lets running jobs finish and joins every worker.
    @discardableResult
    public func stop() -> [Job] {
        let dropped = queue.withLock { q in
            q.stopped = true
            defer { q.jobs.removeAll() }
            return q.jobs
        }
        for worker in workers { worker.requestStop() }
        for worker in workers { worker.join() }
        return dropped
    }
}
