// ParallelWork: every share runs exactly once, on threads of its own, and the map keeps order.
import FaultlineThreads
import Glibc
import Synchronization
import XCTest

final class ParallelWorkTests: XCTestCase {
    func testEveryWorkerRunsOnceAndTheCallerIsWorkerZero() {
        let caller = pthread_self()
        let seen = Mutex<[Int: pthread_t]>([:])
        ParallelWork.onWorkers(5) { w in
            seen.withLock { XCTAssertNil($0.updateValue(pthread_self(), forKey: w), "worker \(w) ran twice") }
        }
        let threads = seen.withLock { $0 }
        XCTAssertEqual(threads.keys.sorted(), [0, 1, 2, 3, 4])
        XCTAssertEqual(threads[0], caller, "worker 0 runs on the caller's thread")
        XCTAssertEqual(Set(threads.values.map { UInt($0) }).count, 5, "each worker on a thread of its own")
    }

    func testTheMapKeepsOrderForAnySplit() {
        let items = Array(0..<1_003)
        for workers in [0, 1, 2, 3, 7, 64, 2_000] {
            XCTAssertEqual(ParallelWork.map(items, workers: workers) { $0 * 3 + 1 }, items.map { $0 * 3 + 1 }, "\(workers) workers")
        }
        XCTAssertEqual(ParallelWork.map([Int](), workers: 4) { $0 }, [])
    }

    func testTheMapHoldsValuesThatNeedReleasing() {
        // Class instances: an uninitialised or doubly initialised slot would crash or leak here.
        final class Box { let v: Int; init(_ v: Int) { self.v = v } }
        let boxes = ParallelWork.map(Array(0..<500), workers: 3) { Box($0) }
        XCTAssertEqual(boxes.map(\.v), Array(0..<500))
    }
}
