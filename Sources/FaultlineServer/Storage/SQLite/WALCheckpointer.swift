// WAL checkpoints off the write path: SQLite's automatic checkpoint runs inside the commit that
// crosses the threshold, copying the WAL into the database file and syncing it while every ingest
// in that group commit waits for its reply (the p99 of tools/bench-ingest). Here a connection of
// its own runs a PASSIVE checkpoint (never blocks the writer or readers) every `interval`; the
// writer's automatic checkpoint stays on at a high threshold as a backstop.
import Foundation

final class WALCheckpointer: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "faultline-wal-checkpoint")
    private let timer: DispatchSourceTimer

    init(path: String, interval: Double = 1) throws {
        let c = try SQLiteConnection(path: path)
        connection = c
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { _ = try? c.exec("PRAGMA wal_checkpoint(PASSIVE)") }
        timer.resume()
    }

    /// Cancels the timer and waits for a checkpoint in progress.
    func stop() {
        timer.cancel()
        queue.sync {}
    }
}
