// When a group-commit writer (SQLiteWriter, PostgresIngestBatcher) waits a moment before its next
// batch. A commit costs the same for 2 jobs as for 12, and the replies just sent bring the next
// requests: right after a batch of several jobs commits, the next batch waits while it holds fewer
// than `enough`, until `window` after that commit. A lone client (batches of one) never waits.
// How long is worth waiting depends on what a commit costs (`Rule`).
// (Waiting for requests still decoding, PostgreSQL's commit_delay, was tried: it made legitimate
// ingest's p99 5-10x worse under HostileLoadTests, whose valid-key bombs decode for long and never
// arrive; counting the requests this node is decoding did not make PostgreSQL's batches larger.)
import Foundation

struct GroupCommitGather {
    struct Rule {
        /// How long after the last commit the next batch may wait for company.
        let window: Double
        /// The batch runs at once when it holds this many jobs.
        let enough: Int

        /// SQLite: the commit is a fsync in this process, during which the next requests queue
        /// by themselves; a longer wait would mostly leave the cores idle.
        static let inProcess = Rule(window: 0.0003, enough: 8)
        /// PostgreSQL: every batch is a statement, a round trip and a commit with its WAL flush,
        /// paid in the database's CPU. When one load is shared by several nodes each node has
        /// fewer clients, and the in-process wait let each node commit far smaller batches than
        /// one node alone: the cost per event grew with the nodes (docs/DEPLOY.md).
        static let overNetwork = Rule(window: 0.002, enough: 8)
    }

    let rule: Rule
    /// The last batch's size and when it committed.
    private var lastBatch = 0
    private var lastCommitted = Date.distantPast

    init(_ rule: Rule) {
        self.rule = rule
    }

    /// Until when a batch of `pending` jobs should wait for more; nil: run it now.
    func waitUntil(pending: Int, stopping: Bool) -> Date? {
        guard lastBatch > 1, pending < rule.enough, !stopping else { return nil }
        let due = lastCommitted.addingTimeInterval(rule.window)
        return Date() < due ? due : nil
    }

    /// Whether a producer that made the batch `pending` jobs long must wake the writer: for the
    /// first job (the writer may sleep without a deadline) and for the job that makes the batch
    /// `enough`. In between the writer waits for company until a deadline that it keeps, so a
    /// wake-up per arriving job would only put it back to sleep.
    func wakesWriter(pending: Int) -> Bool {
        pending <= 1 || pending >= rule.enough
    }

    mutating func committed(_ jobs: Int) {
        (lastBatch, lastCommitted) = (jobs, Date())
    }
}
