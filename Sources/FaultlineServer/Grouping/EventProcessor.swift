// The grouping worker: takes stored-but-ungrouped occurrences, symbolicates their grouping frames
// (only against debug files the server holds), fingerprints them and records the issue.
// Acknowledged events are already in the store, so anything lost from this in-memory queue
// (overflow, crash, shutdown) is found again by scanning `processed = 0` rows: at start, and every
// `rescanInterval` seconds while idle, which is how a node groups what another node acknowledged
// and then died before grouping.
import FaultlineThreads
import Foundation
import FaultlineProtocol

public final class EventProcessor: @unchecked Sendable {
    public struct Job: Sendable {
        var occurrenceID: Int64
        var projectID: Int64
        var stack: StackSignature
        var timestamp: Double
        var release: String?
        var environment: String?
        var tags: [EventTag] = []
    }

    let store: Store
    let symbolicator: FrameSymbolicating
    private struct Queue {
        var jobs: [Job] = []
        /// Rows may wait in the store unqueued (start, overflow, a failed batch): scan for them.
        var needsScan = true
        /// When the worker last ran anything: idle scans count from here.
        var lastWork = Date()
        /// When the oldest queued job arrived (nil while the queue is empty).
        var oldestQueued: Date?
    }
    private let worker = WorkerThread(name: "faultline-grouping", state: Queue())
    private var running = false
    private let maxQueue = 50_000
    private let batchSize = 256
    /// A part batch waits this long for more jobs: grouping commits share the writer (and its fsyncs)
    /// with ingest, and under a storm a batch taken as soon as one job arrived held 9 events (half
    /// of all commits, each rewriting the same index pages). With several nodes each node sees only
    /// its share of a load, so a shorter wait made each node's batches smaller and their statements
    /// and commits per event grew with the nodes (docs/SERVER.md, "Then group"). Events are already
    /// durable; only grouping waits, and by at most this (a full batch goes at once).
    let gatherDelay = 0.15
    /// Idle seconds between scans for ungrouped rows (other nodes' leftovers).
    let rescanInterval: Double = 5
    /// A share of the regrouping claim: grouping pauses while a backfill regroups (here or on
    /// another node), so both never race on one stack, but every node's grouping runs at once —
    /// two nodes' batches are kept apart by the store (each occurrence is claimed by one row
    /// update, each issue is one upsert per fingerprint: `Store.recordGrouping`).
    let claim: StoreClaim

    public init(store: Store, symbolicator: FrameSymbolicating) {
        self.store = store
        self.symbolicator = symbolicator
        claim = StoreClaim(store: store, mode: .shared, role: "grouping")
    }

    public func start() {
        running = true
        worker.start { [unowned self] q, stopping in next(&q, stopping) }
    }

    /// Wakes the worker only for the first queued job (it may be idle until its next scan) and for
    /// the one that fills a batch: in between it waits for the batch's gather deadline anyway, and
    /// a wake-up per ingested event only put it back to sleep (a futex call and two context
    /// switches per event).
    public func submit(_ job: Job) {
        worker.update(wakingIf: { [batchSize] q in q.jobs.count <= 1 || q.jobs.count >= batchSize }) { q in
            if q.jobs.count >= maxQueue { q.needsScan = true; return }
            q.jobs.append(job)
            if q.oldestQueued == nil { q.oldestQueued = Date() }
        }
    }

    /// Finishes the queued work, then returns.
    public func stop() {
        guard running else { return }
        worker.stop()
        releaseClaim()  // the worker has finished: its hold is given up here
        running = false
    }

    /// Queued jobs first, in batches; a scan when the queue is empty (and every `rescanInterval`
    /// idle seconds); after a stop request the queue is finished but no scan starts.
    private func next(_ q: inout Queue, _ stopping: Bool) -> WorkerThread<Queue>.Step {
        if q.jobs.isEmpty {
            if !q.needsScan && !stopping {
                let due = q.lastWork.addingTimeInterval(rescanInterval)
                guard Date() >= due else { return .wait(until: due) }
                q.needsScan = true
            }
            guard q.needsScan else { return .exit }
            q.needsScan = false
            q.lastWork = Date()
            return stopping ? .exit : .run { [unowned self] in scanUnprocessed() }
        }
        if q.jobs.count < batchSize && !stopping, let oldest = q.oldestQueued {
            let due = oldest.addingTimeInterval(gatherDelay)
            if Date() < due { return .wait(until: due) }
        }
        let batch = Array(q.jobs.prefix(batchSize))
        q.jobs.removeFirst(batch.count)
        q.oldestQueued = q.jobs.isEmpty ? nil : Date()
        q.lastWork = Date()
        return .run { [unowned self] in process(batch) }
    }

    /// When this worker took its share of the regrouping claim, while it holds it across batches
    /// (worker thread only).
    private var claimedSince: Double?
    /// Longest hold across batches: a backfill waiting for the claim gets it within this (plus a poll).
    private let maxClaimHold = 0.5

    /// Groups a batch holding a share of the regrouping claim. The share is kept across batches
    /// while work keeps coming (taking and giving it up are two commits, which under a storm cost
    /// more than the grouping itself) and given up when the queue runs dry or after `maxClaimHold`.
    /// A backfill waiting for the claim keeps new shares from being granted meanwhile
    /// (`Store.acquireClaim`), so it is let in as soon as the shares held now are released.
    func process(_ jobs: [Job]) {
        do {
            if claimedSince == nil {
                try claim.acquire()
                claimedSince = Date().timeIntervalSince1970
            }
            try claim.check()
            try group(jobs)
        } catch {
            // The rows stay unprocessed; the next scan retries them.
            FileHandle.standardError.write(Data("faultline: grouping failed, will retry: \(error)\n".utf8))
            releaseClaim()
            worker.update { $0.needsScan = true }
            Thread.sleep(forTimeInterval: 1)
            return
        }
        guard let since = claimedSince else { return }
        if Date().timeIntervalSince1970 - since >= maxClaimHold || pending == 0 {
            releaseClaim()
        }
    }

    private func releaseClaim() {
        if claimedSince != nil { claim.release(); claimedSince = nil }
    }

    /// Encoding and key per distinct stack, kept across batches: both depend on the stack alone, and
    /// a storm repeats a few stacks (encoding and hashing them was a twentieth of ingest's CPU).
    private var encodings: [StackSignature: (data: Data, key: String)] = [:]

    /// Runs holding a share of the regrouping claim.
    private func group(_ jobs: [Job]) throws {
        // Fingerprint once per distinct stack in the batch (symbols may arrive between batches).
        var memo: [StackSignature: (Fingerprint, Data, String)] = [:]
        if encodings.count > 4096 { encodings.removeAll(keepingCapacity: true) }
        let outcomes = jobs.map { j -> GroupingOutcome in
            // A stack is hashed once per job when the batch has seen it (the usual case in a
            // storm): hashing a stack's frames again to store what was just found showed in profiles.
            let m: (Fingerprint, Data, String)
            if let seen = memo[j.stack] {
                m = seen
            } else {
                let (data, key) = encodings[j.stack] ?? j.stack.encodedWithKey
                encodings[j.stack] = (data, key)
                m = PhaseClock.time(.groupingFingerprint) { (Fingerprinter.fingerprint(j.stack, symbolicator: symbolicator), data, key) }
                memo[j.stack] = m
            }
            return GroupingOutcome(
                occurrenceID: j.occurrenceID, projectID: j.projectID, stack: j.stack, stackEncoded: m.1, stackKey: m.2,
                fingerprint: m.0, timestamp: j.timestamp, release: j.release, environment: j.environment, tags: j.tags)
        }
        try PhaseClock.time(.groupingStore, count: outcomes.count) { try store.recordGrouping(outcomes) }
    }

    /// Re-reads stored events that were acknowledged but never grouped (restart, overflow).
    func scanUnprocessed() {
        var lastBatch: Set<Int64> = []
        while !worker.isStopping {
            guard let rows = try? store.unprocessedOccurrences(limit: batchSize), !rows.isEmpty else { return }
            let ids = Set(rows.map(\.id))
            if ids == lastBatch { return }  // could not make progress; retry at the next scan
            lastBatch = ids
            let grouping = Dictionary(((try? store.projects()) ?? []).map { ($0.id, $0.groupingConfig) }, uniquingKeysWith: { a, _ in a })
            let jobs = rows.map { o -> Job in
                let decoded = try? StoredEvent.decode(o.compressedEvent)
                let config = grouping[o.projectID] ?? .newProjects
                return Job(
                    occurrenceID: o.id, projectID: o.projectID, stack: StackExtractor.signature(of: decoded ?? .object([:]), grouping: config),
                    timestamp: o.timestamp, release: o.release, environment: decoded.map(EventFields.environment),
                    tags: decoded.map(EventFields.tags) ?? [])
            }
            process(jobs)
        }
    }

    /// Number of jobs waiting (for /health and tests).
    public var pending: Int { worker.read { $0.jobs.count } }
}
