// WorkerPool, the shared-queue workers under the server's upload assembly: a job never waits
// behind a long one while a worker is free, stop drops and returns what no worker took, joins
// the workers, and refuses later jobs.
import FaultlineThreads
import Foundation
import Synchronization
import XCTest

final class WorkerPoolTests: XCTestCase {
    /// A gate the long job waits at, opened by the test.
    private final class Gate: Sendable {
        private let open = Mutex(false)
        private let taken = Mutex<[Int]>([])
        private let finished = Mutex<[Int]>([])
        func opened() { open.withLock { $0 = true } }
        var isOpen: Bool { open.withLock { $0 } }
        func took(_ job: Int) { taken.withLock { $0.append(job) } }
        func finished(_ job: Int) { finished.withLock { $0.append(job) } }
        var takenJobs: [Int] { taken.withLock { $0 } }
        var finishedJobs: [Int] { finished.withLock { $0 } }
    }

    /// Waits (polling, with a generous bound) until `condition` holds; false if it never did.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition() {
            if Date() >= deadline { return false }
            usleep(1_000)
        }
        return true
    }

    func testShortJobRunsWhileAnotherWorkerHoldsALongOne() {
        let pool = WorkerPool<Int>(name: "test-pool", workers: 2)
        let gate = Gate()
        pool.start { job in
            gate.took(job)
            if job == 0 { while !gate.isOpen { usleep(1_000) } }
            gate.finished(job)
        }
        pool.submit(0)
        XCTAssertTrue(eventually { gate.takenJobs == [0] })
        for job in 1...20 { pool.submit(job) }
        // Job 0 still holds its worker: the other one runs every later job meanwhile.
        XCTAssertTrue(eventually { gate.finishedJobs == Array(1...20) })
        XCTAssertFalse(gate.finishedJobs.contains(0))
        gate.opened()
        XCTAssertTrue(eventually { gate.finishedJobs.count == 21 })
        XCTAssertEqual(pool.stop(), [])
    }

    func testStopReturnsJobsNoWorkerTookAndRefusesLaterOnes() {
        let pool = WorkerPool<Int>(name: "test-pool-stop", workers: 1)
        let gate = Gate()
        pool.start { job in
            gate.took(job)
            while !gate.isOpen { usleep(1_000) }
            gate.finished(job)
        }
        for job in 0..<5 { pool.submit(job) }
        XCTAssertTrue(eventually { gate.takenJobs == [0] && pool.queuedCount == 4 })
        // stop waits for the running job, so the gate opens from another thread once stop has
        // dropped the queue (the only worker is at the gate: nothing else empties it).
        let opener = Thread {
            while pool.queuedCount > 0 { usleep(1_000) }
            gate.opened()
        }
        opener.start()
        XCTAssertEqual(pool.stop(), [1, 2, 3, 4])
        XCTAssertEqual(gate.finishedJobs, [0], "the running job finishes before stop returns")
        XCTAssertFalse(pool.submit(5))
        XCTAssertEqual(gate.takenJobs, [0])
    }
}
