// Phase timers for profiling ingest and backfill without perf or valgrind: with
// FAULTLINE_PHASE_TIMES=1 in the environment, named phases accumulate thread CPU time and wall
// time (clock_gettime), and the table goes to stderr when the server stops (and on `report()`).
// Off, a phase costs one load of a constant flag.
import Foundation
import Synchronization

public enum PhaseClock {
    public static let enabled: Bool = ProcessInfo.processInfo.environment["FAULTLINE_PHASE_TIMES"] == "1"

    /// A fixed list of phases, reported in this order.
    public enum Phase: Int, CaseIterable, Sendable {
        case httpHandler, ingestAuth, inflateAndFrame, parseEvent, storeCompress, stackSignature, storeWait,
            writerJobs, writerCommit, writerBatch, groupingFingerprint, groupingStore,
            backfillPrepare, backfillClaimWait, backfillStacksQuery, backfillFingerprint, backfillApply, regroupLookup, regroupMerge, regroupMove,
            regroupRecount, backfillRecord, minidumpWalk, minidumpRewalk
    }

    /// Per phase: calls (or items), wall and CPU nanoseconds. A lock is fine: only when enabled.
    private static let totals = Mutex<[(count: Int, wall: Int, cpu: Int)]>(Phase.allCases.map { _ in (0, 0, 0) })

    public struct Mark { let wall: Int; let cpu: Int }

    @inline(__always) public static func start() -> Mark? {
        guard enabled else { return nil }
        return Mark(wall: now(CLOCK_MONOTONIC), cpu: now(CLOCK_THREAD_CPUTIME_ID))
    }

    @inline(__always) public static func end(_ phase: Phase, _ mark: Mark?, count: Int = 1) {
        guard let mark else { return }
        let wall = now(CLOCK_MONOTONIC) - mark.wall, cpu = now(CLOCK_THREAD_CPUTIME_ID) - mark.cpu
        totals.withLock { t in
            t[phase.rawValue].count += count; t[phase.rawValue].wall += wall; t[phase.rawValue].cpu += cpu
        }
    }

    /// Times `body` as `phase`.
    @inline(__always) public static func time<T, E: Error>(_ phase: Phase, count: Int = 1, _ body: () throws(E) -> T) throws(E) -> T {
        let m = start()
        defer { end(phase, m, count: count) }
        return try body()
    }

    /// Adds a count without a time (for example events per batch).
    public static func count(_ phase: Phase, _ n: Int) {
        guard enabled else { return }
        totals.withLock { $0[phase.rawValue].count += n }
    }

    private static func now(_ clock: clockid_t) -> Int {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }

    /// The table: per phase, calls (or items), total and per-call wall and CPU time.
    public static func report() -> String {
        var lines = ["phase                      calls      wall ms    cpu ms   wall us/call  cpu us/call"]
        let t = totals.withLock { $0 }
        for p in Phase.allCases {
            let (n, w, c) = t[p.rawValue]
            guard n > 0 else { continue }
            lines.append(
                "\(p)".padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(
                        format: " %8d %11.1f %9.1f %13.1f %12.1f", n, Double(w) / 1e6, Double(c) / 1e6,
                        Double(w) / 1e3 / Double(n), Double(c) / 1e3 / Double(n)))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
