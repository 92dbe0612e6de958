// Symbolication for read requests (event JSON, issue stacks, the issue page): an address the
// server has not answered yet may need a module's index built (a partial build from the units
// covering it, or the unit it lacks), which can take seconds on a large file. That work runs on a
// small pool of background threads; the HTTP thread waits for it at most a budget and answers
// the frames still being worked on as pending. The answer lands in the caching symbolicator, so
// a later read gets it.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineThreads

/// One address a read asks about.
public struct FrameLookup: Hashable, Sendable {
    public let buildID: BuildID
    public let offset: UInt64
    public let isReturnAddress: Bool
    public let architecture: CPUArchitecture
}

extension StackFrame {
    /// What a read asks the symbolicator about this frame (in the module `buildID`).
    func lookup(buildID: BuildID) -> FrameLookup {
        FrameLookup(buildID: buildID, offset: offset, isReturnAddress: isReturnAddress, architecture: architecture)
    }
}

/// Contract: `settle` never blocks longer than `budget` (plus a lock hand-off); every lookup it
/// starts runs once however many reads ask for it meanwhile. Lookups of one build-id always go to
/// the same worker, so concurrent first reads of a file share one index build and never occupy
/// more than one pool thread with it.
public final class ReadSymbolication: @unchecked Sendable {
    struct Queue {
        var jobs: [FrameLookup] = []
        /// Queued or running: what a waiting read checks.
        var inFlight: Set<FrameLookup> = []
    }

    let symbolicator: CachingSymbolicator
    /// How long a read waits for lookups it started (0: never waits).
    public let budget: TimeInterval
    private let workers: [WorkerThread<Queue>]

    public init(symbolicator: CachingSymbolicator, budget: TimeInterval, threads: Int = 2) {
        self.symbolicator = symbolicator
        self.budget = max(0, budget)
        workers = (0..<max(1, threads)).map { WorkerThread(name: "faultline-read-symbols-\($0)", state: Queue()) }
    }

    public func start() {
        for w in workers {
            let symbolicator = self.symbolicator
            w.start { [unowned w] q, stopping in
                // Queued lookups are dropped at stop: their readers have long had their answer.
                if stopping { return .exit }
                guard !q.jobs.isEmpty else { return .wait(until: nil) }
                let job = q.jobs.removeFirst()
                return .run {
                    _ = symbolicator.resolve(
                        buildID: job.buildID, modulePath: nil, offset: job.offset, isReturnAddress: job.isReturnAddress, architecture: job.architecture)
                    w.update { $0.inFlight.remove(job) }
                }
            }
        }
    }

    public func stop() { for w in workers { w.stop() } }

    private func worker(for buildID: BuildID) -> WorkerThread<Queue> {
        var h = Hasher()
        h.combine(buildID)
        return workers[Int(UInt(bitPattern: h.finalize()) % UInt(workers.count))]
    }

    /// Starts the lookups not answered yet and waits for them at most `budget`; returns those
    /// still running (the caller shows them as pending).
    public func settle(_ lookups: [FrameLookup]) -> Set<FrameLookup> {
        let deadline = Date().addingTimeInterval(budget)
        var byWorker: [ObjectIdentifier: (WorkerThread<Queue>, [FrameLookup])] = [:]
        for l in Set(lookups)
        where symbolicator.cached(buildID: l.buildID, offset: l.offset, isReturnAddress: l.isReturnAddress, architecture: l.architecture) == nil {
            let w = worker(for: l.buildID)
            byWorker[ObjectIdentifier(w), default: (w, [])].1.append(l)
        }
        var pending: Set<FrameLookup> = []
        for (w, mine) in byWorker.values {
            w.update { q in
                for l in mine where q.inFlight.insert(l).inserted { q.jobs.append(l) }
            }
            _ = w.wait(until: deadline) { q in mine.allSatisfy { !q.inFlight.contains($0) } }
            w.read { q in for l in mine where q.inFlight.contains(l) { pending.insert(l) } }
        }
        return pending
    }
}
