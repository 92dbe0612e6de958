// Automatic backfill: when a debug file arrives, every stored stack that references its build-id
// is re-symbolicated and regrouped; occurrences move per stack, so 100k occurrences of a few
// hundred distinct stacks cost a few hundred fingerprints and a few UPDATEs. Each unique
// (build-id, address) is symbolicated once per run (a fresh memo per run).
//
// Backfills are jobs in the store (`BackfillJobs`), not an in-memory queue: an upload to any node
// queues one row; every node's worker takes queued jobs under a lease it renews while it runs, so
// a job runs on one node at a time cluster-wide. A node killed mid-run stops renewing; once its
// lease has run out, the next node that polls takes the job over and continues after the last
// stack key the dead node saved (stacks go in key order, one batch per transaction).
import FaultlineThreads
import Foundation
import FaultlineProtocol
import Synchronization

public final class Backfiller: @unchecked Sendable {
    let store: any Store
    let jobs: any BackfillJobs
    let records: any DebugFileRecordStore
    let symbolicator: FrameSymbolicating
    /// Walks again the stored minidumps that loaded the build-id, before its stacks are regrouped
    /// (Minidumps/MinidumpRewalk); nil: no dumps are kept.
    let rewalk: MinidumpRewalk?
    /// Held while stacks move, so grouping (here or on another node) waits meanwhile.
    let claim: StoreClaim
    /// This node's name on the jobs it holds (random part, pid, role: readable in the row).
    let holder: String
    /// A job's lease: a holder killed mid-run frees it within this many seconds.
    let lease: Double
    /// How often an idle worker asks the store for jobs queued by other nodes (or freed by a dead one).
    let poll: Double
    /// Stacks regrouped per transaction (and per saved resume point). Occurrences of one stack are
    /// spread over the table, so each transaction rewrites and commits most of the same pages again:
    /// with 200 the regroup of 100,000 occurrences took 3.9 s wall in 10 transactions, with 1,000
    /// 1.5–2.6 s in 2 (tools/bench-backfill, phase timers). Ingest waits for a transaction meanwhile.
    let batchSize: Int
    /// Threads that fingerprint a batch's stacks (one per core).
    let parallelism = max(1, ProcessInfo.processInfo.activeProcessorCount)
    private struct Poll {
        /// A job was queued here (or one just finished): ask the store now, not at the next poll.
        var wake = true
        var lastPoll = Date.distantPast
        var running: BuildID?
    }
    private let worker = WorkerThread(name: "faultline-backfill", state: Poll())
    private var started = false

    public convenience init(stores: Stores, symbolicator: FrameSymbolicating, batchSize: Int = 1000, lease: Double = 6, poll: Double = 1) {
        self.init(stores: stores, symbolicator: symbolicator, rewalk: nil, batchSize: batchSize, lease: lease, poll: poll)
    }

    init(stores: Stores, symbolicator: FrameSymbolicating, rewalk: MinidumpRewalk?, batchSize: Int = 1000, lease: Double = 6, poll: Double = 1) {
        let store = stores.core
        self.rewalk = rewalk
        self.store = store
        self.jobs = stores.backfills
        self.records = stores.debugFiles
        self.symbolicator = symbolicator
        self.batchSize = max(1, batchSize)
        self.lease = lease
        self.poll = poll
        claim = StoreClaim(store: store, role: "backfill")
        holder = "\(UUID().uuidString):\(ProcessInfo.processInfo.processIdentifier):backfill"
    }

    public func start() {
        started = true
        // A debug file whose backfill was never queued (the node died between installing it and
        // queueing) or failed is queued again; queued and running jobs are taken as they are.
        if let files = try? records.debugFiles() {
            for f in files where f.hasDebugInfo || f.hasSymbols || f.isExecutable {
                let latest = try? jobs.latestBackfill(buildID: f.buildID)
                if latest == nil || latest?.state == "failed" { enqueue(f.buildID) }
            }
        }
        // A stop request ends the thread between two batches (the job keeps its resume point).
        worker.start { [unowned self] p, stopping in
            if stopping { return .exit }
            let due = p.lastPoll.addingTimeInterval(poll)
            guard p.wake || Date() >= due else { return .wait(until: due) }
            p.wake = false
            p.lastPoll = Date()
            return .run { [unowned self] in takeAndRunJob() }
        }
    }

    /// Stops between two batches: the job keeps its resume point, and this node or another takes
    /// it over when the lease runs out.
    public func stop() {
        guard started else { return }
        worker.stop()
        started = false
    }

    /// Queues a backfill of `id` in the store (called before the assemble reply says `ok`, so a
    /// client that then asks any node for the status never sees "installed" without one).
    public func enqueue(_ id: BuildID) {
        do { _ = try jobs.enqueueBackfill(buildID: id) } catch {
            FileHandle.standardError.write(Data("faultline: could not queue the backfill of \(id.hex): \(error)\n".utf8))
        }
        worker.update { $0.wake = true }
    }

    public enum Progress: Equatable, Sendable { case queued, running, idle }

    /// Where the latest backfill of `id` stands cluster-wide; when idle, its record is final.
    public func progress(of id: BuildID) -> Progress {
        if worker.read({ $0.running == id }) { return .running }
        switch (try? jobs.latestBackfill(buildID: id))?.state {
        case "queued": return .queued
        case "running": return .running
        default: return .idle
        }
    }

    /// True while a backfill is queued or running on any node (tests and benchmarks wait on it).
    public var isBusy: Bool {
        return worker.read({ $0.running != nil }) || ((try? jobs.openBackfills().isEmpty == false) ?? false)
    }

    /// Takes one queued (or abandoned) job from the store and runs it; after a job, the next poll
    /// comes at once, since more may be queued.
    private func takeAndRunJob() {
        let job: BackfillJob?
        do { job = try jobs.claimBackfill(holder: holder, lease: lease) } catch {
            FileHandle.standardError.write(Data("faultline: could not take a backfill job: \(error)\n".utf8))
            job = nil
        }
        guard let job else { return }
        run(job)
        worker.update { $0.wake = true }
    }

    enum Interruption: Error { case stopping, leaseLost }

    /// Runs one job this node holds. A run that throws is recorded as `failed` with the error
    /// (best effort: the store may be what failed), so `upload --wait` can tell "uploaded but the
    /// backfill failed" from "still running"; one that is stopped or lost its lease is left as it is.
    private func run(_ job: BackfillJob) {
        let (jobs, id, holder, lease) = (self.jobs, job.record.id, self.holder, self.lease)
        let beat = LeaseHeartbeat(lease: lease) { try jobs.renewBackfill(id: id, holder: holder, lease: lease) }
        worker.update { $0.running = job.record.buildID }
        defer {
            beat.cancel()
            worker.update { $0.running = nil }
        }
        var record = job.record
        do {
            try regroup(&record, resumeAfter: job.resumeAfter, beat: beat)
        } catch is Interruption {
        } catch let e as StoreClaim.ClaimError {
            FileHandle.standardError.write(Data("faultline: backfill of \(record.buildID.hex) interrupted: \(e)\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("faultline: backfill of \(record.buildID.hex) failed: \(error)\n".utf8))
            record.state = "failed"
            record.error = "\(error)"
            record.finished = Date().timeIntervalSince1970
            _ = try? jobs.saveBackfill(record, resumeAfter: nil, holder: holder)
        }
    }

    private func regroup(_ record: inout BackfillRecord, resumeAfter: String?, beat: LeaseHeartbeat) throws {
        let buildID = record.buildID
        symbolicator.invalidate(buildID: buildID)
        // The index is built on arrival, also for a build-id no stored occurrence references yet;
        // on another thread meanwhile the claim is taken and the stacks are read.
        let prepared = DispatchGroup()
        DispatchQueue.global().async(group: prepared) { [symbolicator] in
            PhaseClock.time(.backfillPrepare) { symbolicator.prepare(buildID: buildID) }
        }
        defer { prepared.wait() }
        // Hold grouping off so no occurrence is grouped with stale symbols while stacks move.
        try PhaseClock.time(.backfillClaimWait) { try claim.acquire() }
        defer { claim.release() }
        var resume = resumeAfter
        // Dumps first: a new walk can give an occurrence a new stack, which the stack phase below
        // then finds among those referencing the build-id.
        if let rewalk, resume == nil || MinidumpRewalk.resumeAfter(resume) != nil {
            try rewalk.run(buildID: buildID, after: MinidumpRewalk.resumeAfter(resume) ?? 0, symbolicator: symbolicator) { last in
                if worker.isStopping { throw Interruption.stopping }
                try claim.check()
                guard beat.holds else { throw Interruption.leaseLost }
                try save(record, MinidumpRewalk.resumePoint(after: last), beat)
            }
            resume = nil
        }
        // Key order, so a resume point splits the stacks into "done" and "to do" on every node.
        let stacks = try PhaseClock.time(.backfillStacksQuery) { try jobs.stacks(referencing: buildID).compactMap(BackfillStack.init) }
            .map { ($0.signature.key, $0) }.sorted { $0.0 < $1.0 }
        prepared.wait()
        let todo = resume.map { after in stacks.filter { $0.0 > after } } ?? stacks
        record.state = "running"
        record.stacks = Int64(stacks.count)
        record.occurrences = stacks.reduce(0) { $0 + $1.1.occurrences }
        record.occurrencesDone = record.occurrences - todo.reduce(0) { $0 + $1.1.occurrences }
        if resume == nil { record.occurrencesSymbolicated = 0; record.merges = []; record.issuesMerged = 0; record.addressesSymbolicated = 0 }
        try save(record, resume, beat)
        // A fresh cache per run: each distinct (build-id, address) is symbolicated once, and counted.
        let memo = CachingSymbolicator(symbolicator)
        let addressesBefore = record.addressesSymbolicated
        // Batch k regroups on the store's writer while batch k + 1 is fingerprinted here. Its progress
        // is saved only after it committed, so a resume point never runs ahead of the store; the
        // claim is released only after the last regroup ended (this defer runs before the claim's).
        let applier = DispatchGroup()
        nonisolated(unsafe) var applied: Result<RegroupSummary, Error>?
        var inFlight: (slice: ArraySlice<(String, BackfillStack)>, symbolicated: Int64, addresses: Int)?
        defer { applier.wait() }
        func settle(last: Bool) throws {
            applier.wait()
            guard let (slice, symbolicated, addresses) = inFlight else { return }
            inFlight = nil
            let summary = try applied!.get()
            record.occurrencesSymbolicated += symbolicated
            record.issuesMerged += summary.issuesMerged
            record.merges += summary.merges
            record.occurrencesDone += slice.reduce(0) { $0 + $1.1.occurrences }
            record.addressesSymbolicated = addressesBefore + Int64(addresses)
            resume = slice.last?.0 ?? resume
            if !last { try PhaseClock.time(.backfillRecord) { try save(record, resume, beat) } }
        }
        var i = 0
        while i < todo.count {
            if worker.isStopping { try settle(last: false); throw Interruption.stopping }
            let slice = todo[i..<min(i + batchSize, todo.count)]
            let moves = PhaseClock.time(.backfillFingerprint, count: slice.count) { fingerprints(Array(slice), memo) }
            let symbolicated = zip(slice, moves).reduce(Int64(0)) { $0 + ($1.1.fingerprint.symbolicated ? $1.0.1.occurrences : 0) }
            try settle(last: false)
            try claim.check()
            guard beat.holds else { throw Interruption.leaseLost }
            inFlight = (slice, symbolicated, memo.count)
            DispatchQueue.global().async(group: applier) { [store] in
                applied = Result { try PhaseClock.time(.backfillApply, count: moves.count) { try IssueMerger.apply(moves, in: store) } }
            }
            i += batchSize
        }
        try settle(last: true)
        record.state = "done"
        record.finished = Date().timeIntervalSince1970
        try save(record, resume, beat)
    }

    /// The new fingerprint of each stack, on as many threads as there are cores: symbolicating a
    /// batch's frames is most of a backfill's work once merges move no rows (tools/results/backfill-*),
    /// and the symbolicator and `memo` are safe to share. Results in `stacks`' order.
    private func fingerprints(_ stacks: [(String, BackfillStack)], _ memo: CachingSymbolicator) -> [Regrouping] {
        ParallelWork.map(stacks, workers: max(1, min(parallelism, stacks.count / 64))) { key, s in
            Regrouping(stackKey: key, projectID: s.projectID, fingerprint: Fingerprinter.fingerprint(s.signature, symbolicator: memo))
        }
    }

    /// Saves progress fenced by the lease: a holder that lost its job writes nothing more.
    private func save(_ record: BackfillRecord, _ resume: String?, _ beat: LeaseHeartbeat) throws {
        guard try jobs.saveBackfill(record, resumeAfter: resume, holder: holder) else { throw Interruption.leaseLost }
    }
}
