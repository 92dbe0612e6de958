// Group commit: one thread owns the write connection and runs every pending job in one
// transaction, so many concurrent ingests share one fsync instead of paying one each; when a batch
// waits for company is GroupCommitGather's rule.
import FaultlineThreads
import Foundation

final class SQLiteWriter: @unchecked Sendable {
    typealias Job = (SQLiteConnection) throws -> Void
    /// `rerunnable`: the job only runs statements (an ingest's inserts), so it may run again after
    /// a rollback.
    private struct Pending { let job: Job; let done: ((Error?) -> Void)?; let rerunnable: Bool }
    private struct Queue {
        var jobs: [Pending] = []
        var gather = GroupCommitGather(.inProcess)
        /// Set by `stop`: nothing more is taken (the thread is ending and would never run it).
        var closed = false
    }
    private let connection: SQLiteConnection
    /// The writer thread; its state is the jobs waiting for the next batch.
    private let writer = WorkerThread(name: "faultline-sqlite-writer", state: Queue())
    /// Jobs per transaction at most, to bound the time a batch holds the write lock.
    private let maxBatch = 512

    init(connection: SQLiteConnection) {
        self.connection = connection
        // Batches until stopped, and after a stop request until nothing is pending.
        writer.start { [unowned self] q, stopping in
            if q.jobs.isEmpty { return stopping ? .exit : .wait(until: nil) }
            if let due = q.gather.waitUntil(pending: q.jobs.count, stopping: stopping) { return .wait(until: due) }
            let batch = Array(q.jobs.prefix(maxBatch))
            q.jobs.removeFirst(batch.count)
            return .run { [unowned self] in
                run(batch)
                writer.update { $0.gather.committed(batch.count) }
            }
        }
    }

    /// Runs `job` inside the next batch and returns once that batch is committed (or failed).
    /// `rerunnable`: the job only runs statements, so it may run again after a rollback (`run`).
    @discardableResult
    func sync<T>(rerunnable: Bool = false, _ job: @escaping (SQLiteConnection) throws -> T) throws -> T {
        let sem = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, Error>?
        enqueue(
            { c in result = .success(try job(c)) },
            done: { err in
                if let err { result = .failure(err) }
                sem.signal()
            }, rerunnable: rerunnable)
        sem.wait()
        return try result!.get()
    }

    /// Queues `job` without waiting; `done` runs after the commit. `rerunnable` as for `sync`.
    func async(rerunnable: Bool = false, _ job: @escaping Job, done: ((Error?) -> Void)? = nil) { enqueue(job, done: done, rerunnable: rerunnable) }

    /// Jobs waiting for the next batch (tests).
    var queued: Int { writer.read { $0.jobs.count } }

    /// A job given after `stop` is not run: its `done` gets `StoreError.closed` at once.
    private func enqueue(_ job: @escaping Job, done: ((Error?) -> Void)?, rerunnable: Bool) {
        let taken = writer.update(wakingIf: { $0.gather.wakesWriter(pending: $0.jobs.count) }) { q -> Bool in
            guard !q.closed else { return false }
            q.jobs.append(Pending(job: job, done: done, rerunnable: rerunnable))
            return true
        }
        if !taken { done?(StoreError.closed) }
    }

    /// Runs what is queued, then ends the thread.
    func stop() {
        writer.update { $0.closed = true }
        writer.stop()
    }

    /// Rerunnable jobs (ingest's inserts, grouping's batches, install windows) run first and
    /// without savepoints: any savepoint open while a job writes costs CPU in proportion to the
    /// pages it changes (SQLite journals their old images, so a rollback to it is possible; past
    /// 64 KiB into a temporary file). If one of them fails, the transaction is rolled back — nothing
    /// else has run in it yet — and begun again with each in a savepoint of its own. Every other
    /// job runs in its own savepoint, so a failing job cannot undo the others. (Moving the ingest
    /// jobs first is safe: a batch commits as one, and no other job depends on a row an ingest
    /// job of the same batch writes — an occurrence is grouped only after its own commit — and a
    /// grouping batch runs under a share of the regrouping claim taken in an earlier commit, so no
    /// job it could overtake is one that excludes it.)
    private func run(_ batch: [Pending]) {
        var outcomes = [Error?](repeating: nil, count: batch.count)
        PhaseClock.count(.writerBatch, batch.count)
        let rerunnable = batch.indices.filter { batch[$0].rerunnable }
        let others = batch.indices.filter { !batch[$0].rerunnable }
        do {
            try connection.run("BEGIN IMMEDIATE")
            let jobs = PhaseClock.start()
            do {
                for i in rerunnable { try batch[i].job(connection) }
            } catch {
                try connection.run("ROLLBACK")
                try connection.run("BEGIN IMMEDIATE")
                for i in rerunnable { outcomes[i] = runAlone(batch[i]) }
            }
            for i in others { outcomes[i] = runAlone(batch[i]) }
            PhaseClock.end(.writerJobs, jobs, count: batch.count)
            try PhaseClock.time(.writerCommit) { try connection.run("COMMIT") }
        } catch {
            _ = try? connection.run("ROLLBACK")
            for i in outcomes.indices where outcomes[i] == nil { outcomes[i] = error }
        }
        for (i, p) in batch.enumerated() { p.done?(outcomes[i]) }
    }

    /// Runs one job in its own savepoint, so a failing job cannot undo the others; its error.
    private func runAlone(_ p: Pending) -> Error? {
        do {
            try connection.run("SAVEPOINT job")
            try p.job(connection)
            try connection.run("RELEASE job")
            return nil
        } catch {
            _ = try? connection.run("ROLLBACK TO job")
            _ = try? connection.run("RELEASE job")
            return error
        }
    }
}
