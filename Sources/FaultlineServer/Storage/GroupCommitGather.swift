// When a group-commit writer (SQLiteWriter, PostgresIngestBatcher) waits a moment before its next
// batch. Right after a batch of several jobs commits, the replies just sent bring the next
// requests, and a commit costs the same for 2 jobs as for 12: the next batch waits a little while
// it holds few. A lone client (batches of one) never waits. (Waiting for requests still decoding,
// PostgreSQL's commit_delay, was tried: it made legitimate ingest's p99 5-10x worse under
// HostileLoadTests, whose valid-key bombs decode for long and never arrive.)
import Foundation

struct GroupCommitGather {
    /// How long after the last commit the next batch may wait, and up to how many jobs it waits.
    static let window = 0.0003
    static let enough = 8

    /// The last batch's size and when it committed.
    private var lastBatch = 0
    private var lastCommitted = Date.distantPast

    /// Until when a batch of `pending` jobs should wait for more; nil: run it now.
    func waitUntil(pending: Int, stopping: Bool) -> Date? {
        guard lastBatch > 1, pending < Self.enough, !stopping else { return nil }
        let due = lastCommitted.addingTimeInterval(Self.window)
        return Date() < due ? due : nil
    }

    mutating func committed(_ jobs: Int) {
        (lastBatch, lastCommitted) = (jobs, Date())
    }
}
