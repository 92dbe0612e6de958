// WorkerThread, the loop under the SDK's and the server's background threads: work queued before
// a stop is drained when `next` says so, joins return, waiters see each step, deadlines fire.
import FaultlineThreads
import Foundation
import XCTest

final class WorkerThreadTests: XCTestCase {
    private struct Queue { var items: [Int] = []; var done: [Int] = [] }

    /// A drain-then-exit rule: everything queued before the stop request is processed before join returns.
    func testStopDrainsWhatNextStillRunsThenJoinReturns() {
        let worker = WorkerThread(name: "test-drain", state: Queue())
        worker.start { q, stopping in
            guard !q.items.isEmpty else { return stopping ? .exit : .wait(until: nil) }
            let batch = q.items
            q.items.removeAll()
            return .run { worker.update { $0.done += batch } }
        }
        for i in 0..<1000 { worker.update { $0.items.append(i) } }
        XCTAssertTrue(worker.stop(timeout: 30))
        XCTAssertEqual(worker.read { $0.done }, Array(0..<1000))
        XCTAssertTrue(worker.isStopping)
    }

    /// An exit-at-once rule leaves the queue as it was: what still runs is the caller's choice.
    func testExitAtOnceLeavesQueuedWork() {
        let worker = WorkerThread(name: "test-exit", state: Queue())
        let gate = NSCondition()
        nonisolated(unsafe) var open = false
        worker.start { q, stopping in
            if stopping { return .exit }
            guard !q.items.isEmpty else { return .wait(until: nil) }
            let item = q.items.removeFirst()
            return .run {
                gate.lock(); while !open { gate.wait() }; gate.unlock()
                worker.update { $0.done.append(item) }
            }
        }
        worker.update { $0.items += [1, 2, 3] }
        // The first item is taken (the thread holds it at the gate) before the stop request.
        XCTAssertTrue(worker.wait(until: Date().addingTimeInterval(30)) { $0.items.count == 2 })
        worker.requestStop()
        gate.lock(); open = true; gate.broadcast(); gate.unlock()
        XCTAssertTrue(worker.join(timeout: 30))
        XCTAssertEqual(worker.read { $0.done }, [1])
        XCTAssertEqual(worker.read { $0.items }, [2, 3])
    }

    /// A `.wait(until:)` deadline makes the next decision without anyone waking the thread.
    func testDeadlineRunsPeriodicPassesWithoutWakeUps() {
        let worker = WorkerThread(name: "test-periodic", state: (due: Date.distantPast, passes: 0))
        worker.start { s, stopping in
            if stopping { return .exit }
            if Date() < s.due { return .wait(until: s.due) }
            s.due = Date().addingTimeInterval(0.01)
            s.passes += 1
            return .run {}
        }
        XCTAssertTrue(worker.wait(until: Date().addingTimeInterval(30)) { $0.passes >= 5 })
        XCTAssertTrue(worker.stop(timeout: 30))
    }

    func testJoinOfAThreadNeverStartedReturnsAtOnce() {
        let worker = WorkerThread(name: "test-unstarted")
        XCTAssertTrue(worker.join())
        XCTAssertTrue(worker.stop())
    }

    /// `prepare` runs on the worker thread before the first decision.
    func testPrepareRunsOnTheWorkerThreadFirst() {
        let worker = WorkerThread(name: "test-prepare", state: [String]())
        worker.start(prepare: { worker.update { $0.append(Thread.isMainThread ? "main thread" : "worker thread") } }) { s, stopping in
            if stopping { return .exit }
            if s.count == 1 { s.append("next"); return .run {} }
            return .wait(until: nil)
        }
        XCTAssertTrue(worker.wait(until: Date().addingTimeInterval(30)) { $0.count == 2 })
        XCTAssertEqual(worker.read { $0 }, ["worker thread", "next"])
        XCTAssertTrue(worker.stop(timeout: 30))
    }

    /// A producer whose change the thread's rule does not need yet skips the wake-up, and one
    /// whose change it needs wakes it: the thread decides once to wait, once more when woken (the
    /// batch), and once after it.
    func testAnUpdateWakesOnlyWhenItsRuleSaysTheThreadNeedsIt() {
        let worker = WorkerThread(name: "test-waking-if", state: (items: [Int](), done: [[Int]](), decisions: 0))
        worker.start { s, stopping in
            s.decisions += 1
            if stopping { return .exit }
            guard s.items.count >= 3 else { return .wait(until: nil) }
            let batch = s.items
            s.items.removeAll()
            s.done.append(batch)
            return .run {}
        }
        // Its first decision made, the thread holds its lock until it sleeps: every update below
        // finds it asleep.
        XCTAssertTrue(worker.wait(until: Date().addingTimeInterval(30)) { $0.decisions == 1 })
        for i in 0..<2 {
            worker.update(wakingIf: { $0.items.count >= 3 }) { $0.items.append(i) }
            // Not woken, the thread makes no decision (a thread woken by mistake would, at once
            // on an idle machine; on a busy one this check may miss it, never fail wrongly).
            XCTAssertFalse(worker.wait(until: Date().addingTimeInterval(0.1)) { $0.decisions > 1 }, "item \(i) woke the thread")
        }
        worker.update(wakingIf: { $0.items.count >= 3 }) { $0.items.append(2) }
        XCTAssertTrue(worker.wait(until: Date().addingTimeInterval(30)) { $0.done == [[0, 1, 2]] && $0.decisions == 3 })
        XCTAssertTrue(worker.stop(timeout: 30))
    }
}
