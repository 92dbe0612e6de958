// Group commit: one thread owns the write connection and runs every pending job in one
// transaction, so many concurrent ingests share one fsync instead of paying one each.
import FaultlineThreads
import Foundation

final class SQLiteWriter: @unchecked Sendable {
    typealias Job = (SQLiteConnection) throws -> Void
    private struct Pending { let job: Job; let done: ((Error?) -> Void)? }

    private let connection: SQLiteConnection
    /// The writer thread; its state is the jobs waiting for the next batch.
    private let writer = WorkerThread(name: "faultline-sqlite-writer", state: [Pending]())
    /// Jobs per transaction at most, to bound the time a batch holds the write lock.
    private let maxBatch = 512

    init(connection: SQLiteConnection) {
        self.connection = connection
        // Batches until stopped, and after a stop request until nothing is pending.
        writer.start { [unowned self] pending, stopping in
            if pending.isEmpty { return stopping ? .exit : .wait(until: nil) }
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            return .run { [unowned self] in run(batch) }
        }
    }

    /// Runs `job` inside the next batch and returns once that batch is committed (or failed).
    @discardableResult
    func sync<T>(_ job: @escaping (SQLiteConnection) throws -> T) throws -> T {
        let sem = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, Error>?
        enqueue({ c in result = .success(try job(c)) }, done: { err in
            if let err { result = .failure(err) }
            sem.signal()
        })
        sem.wait()
        return try result!.get()
    }

    /// Queues `job` without waiting; `done` runs after the commit.
    func async(_ job: @escaping Job, done: ((Error?) -> Void)? = nil) { enqueue(job, done: done) }

    private func enqueue(_ job: @escaping Job, done: ((Error?) -> Void)?) {
        writer.update { $0.append(Pending(job: job, done: done)) }
    }

    func stop() {
        writer.stop()
    }

    /// Each job runs in its own savepoint so one failing job cannot undo the others.
    private func run(_ batch: [Pending]) {
        var outcomes = [Error?](repeating: nil, count: batch.count)
        PhaseClock.count(.writerBatch, batch.count)
        do {
            try connection.run("BEGIN IMMEDIATE")
            let jobs = PhaseClock.start()
            for (i, p) in batch.enumerated() {
                do {
                    try connection.run("SAVEPOINT job")
                    try p.job(connection)
                    try connection.run("RELEASE job")
                } catch {
                    outcomes[i] = error
                    _ = try? connection.run("ROLLBACK TO job")
                    _ = try? connection.run("RELEASE job")
                }
            }
            PhaseClock.end(.writerJobs, jobs, count: batch.count)
            try PhaseClock.time(.writerCommit) { try connection.run("COMMIT") }
        } catch {
            _ = try? connection.run("ROLLBACK")
            for i in outcomes.indices where outcomes[i] == nil { outcomes[i] = error }
        }
        for (i, p) in batch.enumerated() { p.done?(outcomes[i]) }
    }
}
