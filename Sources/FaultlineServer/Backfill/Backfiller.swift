// Automatic backfill: when a debug file arrives, every stored stack that references its build-id
// is re-symbolicated and regrouped; occurrences move per stack, so 100k occurrences of a few
// hundred distinct stacks cost a few hundred fingerprints and a few UPDATEs. Each unique
// (build-id, address) is symbolicated once per backfill (a fresh memo per run).
import Foundation
import FaultlineProtocol

public final class Backfiller: @unchecked Sendable {
    let store: Store
    let symbolicator: FrameSymbolicating
    /// Held while stacks move, so grouping (here or on another node) waits meanwhile.
    let claim: StoreClaim
    private let cond = NSCondition()
    private var queue: [BuildID] = []
    private var stopping = false
    private var active = 0
    /// Build-ids queued or running, with how many times (an id can be queued again while it runs).
    private var pending: [BuildID: Int] = [:]
    private var running: BuildID?
    private let done = DispatchSemaphore(value: 0)
    private var started = false

    public init(store: Store, symbolicator: FrameSymbolicating) {
        self.store = store
        self.symbolicator = symbolicator
        claim = StoreClaim(store: store, role: "backfill")
    }

    public func start() {
        started = true
        // A backfill queued or running when the server stopped (or was killed) never finished:
        // every debug file without a finished backfill is backfilled again. Runs are idempotent,
        // so repeating one that had in fact finished costs time, never correctness.
        if let files = try? store.debugFiles(), let runs = try? store.backfills(limit: 1_000_000) {
            let finished = Set(runs.filter { $0.state == "done" }.map(\.buildID))
            for f in files where (f.hasDebugInfo || f.hasSymbols) && !finished.contains(f.buildID) { enqueue(f.buildID) }
        }
        let t = Thread { [unowned self] in self.loop() }
        t.name = "faultline-backfill"
        t.start()
    }

    public func stop() {
        guard started else { return }
        cond.lock(); stopping = true; cond.signal(); cond.unlock()
        done.wait()
        started = false
    }

    /// Called before the assemble reply says `ok`, so a client that then asks for the status
    /// never sees a gap between "installed" and "backfill queued".
    public func enqueue(_ id: BuildID) {
        cond.lock(); queue.append(id); pending[id, default: 0] += 1; cond.signal(); cond.unlock()
    }

    public enum Progress: Equatable, Sendable { case queued, running, idle }

    /// Whether a backfill of `id` is waiting or running now; when idle, the store's latest record
    /// for it is final.
    public func progress(of id: BuildID) -> Progress {
        cond.lock(); defer { cond.unlock() }
        if running == id { return .running }
        return (pending[id] ?? 0) > 0 ? .queued : .idle
    }

    /// True while a backfill is queued or running (tests and benchmarks wait on it).
    public var isBusy: Bool { cond.lock(); defer { cond.unlock() }; return !queue.isEmpty || active > 0 }

    private func loop() {
        while true {
            cond.lock()
            while queue.isEmpty && !stopping { cond.wait() }
            if stopping { cond.unlock(); break }
            let id = queue.removeFirst()
            active += 1
            running = id
            cond.unlock()
            do { _ = try run(id) } catch {
                FileHandle.standardError.write(Data("faultline: backfill of \(id.hex) failed: \(error)\n".utf8))
            }
            cond.lock()
            active -= 1
            running = nil
            pending[id] = (pending[id] ?? 1) > 1 ? pending[id]! - 1 : nil
            cond.unlock()
        }
        done.signal()
    }

    /// Runs one backfill synchronously and returns its final record. A run that throws is
    /// recorded as `failed` with the error (best effort: the store may be what failed), so
    /// `upload --wait` can tell "uploaded but the backfill failed" from "still running".
    @discardableResult
    public func run(_ buildID: BuildID) throws -> BackfillRecord {
        let id = try store.createBackfill(buildID: buildID)
        var record = BackfillRecord(id: id, buildID: buildID, state: "running", stacks: 0, occurrences: 0, occurrencesDone: 0,
                                    addressesSymbolicated: 0, issuesMerged: 0, started: Date().timeIntervalSince1970, finished: nil)
        do {
            return try run(buildID, &record)
        } catch {
            record.state = "failed"
            record.error = "\(error)"
            record.finished = Date().timeIntervalSince1970
            try? store.updateBackfill(record)
            throw error
        }
    }

    private func run(_ buildID: BuildID, _ record: inout BackfillRecord) throws -> BackfillRecord {
        symbolicator.invalidate(buildID: buildID)
        // The index is built on arrival, also for a build-id no stored occurrence references yet.
        PhaseClock.time(.backfillPrepare) { symbolicator.prepare(buildID: buildID) }
        // Hold grouping off so no occurrence is grouped with stale symbols while stacks move.
        try PhaseClock.time(.backfillClaimWait) { try claim.acquire() }
        defer { claim.release() }
        let stacks = try PhaseClock.time(.backfillStacksQuery) { try store.stacks(referencing: buildID) }
        record.stacks = Int64(stacks.count)
        record.occurrences = stacks.reduce(0) { $0 + $1.occurrences }
        try store.updateBackfill(record)
        // A fresh cache per run: each distinct (build-id, address) is symbolicated once, and counted.
        let memo = CachingSymbolicator(symbolicator)
        // Stacks per regroup transaction. Occurrences of one stack are spread over the table, so
        // each transaction rewrites and commits most of the same pages again: with 200 the regroup
        // of 100,000 occurrences took 3.9 s wall in 10 transactions, with 1,000 1.5–2.6 s in 2
        // (tools/bench-backfill, phase timers). Ingest waits for a transaction, so it stays bounded.
        let batch = 1000
        var i = 0
        while i < stacks.count {
            let slice = stacks[i..<min(i + batch, stacks.count)]
            let moves = PhaseClock.time(.backfillFingerprint, count: slice.count) {
                slice.map { s in
                    Regrouping(stackKey: s.signature.key, projectID: s.projectID, fingerprint: Fingerprinter.fingerprint(s.signature, symbolicator: memo))
                }
            }
            for (s, m) in zip(slice, moves) where m.fingerprint.symbolicated { record.occurrencesSymbolicated += s.occurrences }
            try claim.check()
            let summary = try PhaseClock.time(.backfillApply, count: slice.count) { try IssueMerger.apply(moves, in: store) }
            record.issuesMerged += summary.issuesMerged
            record.merges += summary.merges
            record.occurrencesDone += slice.reduce(0) { $0 + $1.occurrences }
            record.addressesSymbolicated = Int64(memo.count)
            i += batch
            if i < stacks.count { try PhaseClock.time(.backfillRecord) { try store.updateBackfill(record) } }
        }
        record.state = "done"
        record.finished = Date().timeIntervalSince1970
        try store.updateBackfill(record)
        return record
    }
}
