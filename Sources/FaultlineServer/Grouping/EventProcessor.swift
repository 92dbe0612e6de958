// The grouping worker: takes stored-but-ungrouped occurrences, symbolicates their grouping frames
// (only against debug files the server holds), fingerprints them and records the issue.
// Acknowledged events are already in the store, so anything lost from this in-memory queue
// (overflow, crash, shutdown) is found again by scanning `processed = 0` rows.
import Foundation
import FaultlineProtocol

public final class EventProcessor: @unchecked Sendable {
    public struct Job: Sendable {
        var occurrenceID: Int64
        var projectID: Int64
        var stack: StackSignature
        var timestamp: Double
        var release: String?
    }

    let store: Store
    let symbolicator: FrameSymbolicating
    private let cond = NSCondition()
    private var queue: [Job] = []
    private var needsScan = true
    private var stopping = false
    private var running = false
    private let maxQueue = 50_000
    private let batchSize = 256
    private let done = DispatchSemaphore(value: 0)
    /// Grouping pauses while a backfill regroups (here or on another node), so both never race on one stack.
    let claim: StoreClaim

    public init(store: Store, symbolicator: FrameSymbolicating) {
        self.store = store
        self.symbolicator = symbolicator
        claim = StoreClaim(store: store, role: "grouping")
    }

    public func start() {
        running = true
        let t = Thread { [unowned self] in self.loop() }
        t.name = "faultline-grouping"
        t.start()
    }

    public func submit(_ job: Job) {
        cond.lock()
        if queue.count >= maxQueue { needsScan = true } else { queue.append(job) }
        cond.signal()
        cond.unlock()
    }

    /// Finishes the queued work, then returns.
    public func stop() {
        guard running else { return }
        cond.lock(); stopping = true; cond.signal(); cond.unlock()
        done.wait()
        running = false
    }

    private func loop() {
        while true {
            cond.lock()
            while queue.isEmpty && !needsScan && !stopping { cond.wait() }
            if queue.isEmpty && !needsScan && stopping { cond.unlock(); break }
            let scan = needsScan && queue.isEmpty
            let batch = Array(queue.prefix(batchSize))
            queue.removeFirst(batch.count)
            if scan { needsScan = false }
            cond.unlock()
            if scan {
                if stopping { break }
                scanUnprocessed()
            } else {
                process(batch)
            }
        }
        releaseClaim()
        done.signal()
    }

    /// When this worker took the regrouping claim, while it holds it across batches.
    private var claimedSince: Double?
    /// Longest hold across batches: a backfill waiting for the claim gets it within this (plus a poll).
    private let maxClaimHold = 0.5

    /// Groups a batch holding the regrouping claim. The claim is kept across batches while work
    /// keeps coming (taking and giving it up are two commits, which under a storm cost more than
    /// the grouping itself) and given up when the queue runs dry or after `maxClaimHold`.
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
            cond.lock(); needsScan = true; cond.unlock()
            Thread.sleep(forTimeInterval: 1)
            return
        }
        guard let since = claimedSince else { return }
        if Date().timeIntervalSince1970 - since >= maxClaimHold {
            releaseClaim()
            // Leave a gap of a few polls so a waiting backfill can take the claim.
            Thread.sleep(forTimeInterval: claim.poll * 4)
        } else if pending == 0 {
            releaseClaim()
        }
    }

    private func releaseClaim() {
        if claimedSince != nil { claim.release(); claimedSince = nil }
    }

    /// Encoding and key per distinct stack, kept across batches: both depend on the stack alone, and
    /// a storm repeats a few stacks (encoding and hashing them was a twentieth of ingest's CPU).
    private var encodings: [StackSignature: (data: Data, key: String)] = [:]

    /// Runs holding the regrouping claim.
    private func group(_ jobs: [Job]) throws {
        // Fingerprint once per distinct stack in the batch (symbols may arrive between batches).
        var memo: [StackSignature: (Fingerprint, Data, String)] = [:]
        if encodings.count > 4096 { encodings.removeAll(keepingCapacity: true) }
        let outcomes = jobs.map { j -> GroupingOutcome in
            let m = memo[j.stack] ?? {
                let (data, key) = encodings[j.stack] ?? j.stack.encodedWithKey
                encodings[j.stack] = (data, key)
                return PhaseClock.time(.groupingFingerprint) { (Fingerprinter.fingerprint(j.stack, symbolicator: symbolicator), data, key) }
            }()
            memo[j.stack] = m
            return GroupingOutcome(occurrenceID: j.occurrenceID, projectID: j.projectID, stack: j.stack, stackEncoded: m.1, stackKey: m.2,
                                   fingerprint: m.0, timestamp: j.timestamp, release: j.release)
        }
        try PhaseClock.time(.groupingStore, count: outcomes.count) { try store.recordGrouping(outcomes) }
    }

    /// Re-reads stored events that were acknowledged but never grouped (restart, overflow).
    func scanUnprocessed() {
        var lastBatch: Set<Int64> = []
        while !stopping {
            guard let rows = try? store.unprocessedOccurrences(limit: batchSize), !rows.isEmpty else { return }
            let ids = Set(rows.map(\.id))
            if ids == lastBatch { return }  // could not make progress; retry at the next scan
            lastBatch = ids
            let jobs = rows.map { o -> Job in
                let event = (try? StoredEvent.decode(o.compressedEvent)) ?? .object([:])
                return Job(occurrenceID: o.id, projectID: o.projectID, stack: StackExtractor.signature(of: event),
                           timestamp: o.timestamp, release: o.release)
            }
            process(jobs)
        }
    }

    /// Number of jobs waiting (for /health and tests).
    public var pending: Int { cond.lock(); defer { cond.unlock() }; return queue.count }
}

/// Stored events are the client's JSON, zlib-compressed.
public enum StoredEvent {
    public static func decode(_ compressed: Data) throws -> JSONValue {
        try JSONParser.parse(try Inflate.inflate(compressed, limit: 64 * 1024 * 1024))
    }

    /// Only the top-level members named in `keep` are built (the rest is validated and skipped).
    public static func decode(_ compressed: Data, keeping keep: Set<String>) throws -> JSONValue {
        try JSONParser.parseObject(try Inflate.inflate(compressed, limit: 64 * 1024 * 1024), keeping: keep)
    }
}
