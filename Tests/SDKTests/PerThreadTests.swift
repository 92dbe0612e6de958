// PerThread: each thread gets an instance of its own, the same one every time, and a thread's
// instance is released when the thread ends.
import FaultlineThreads
import Foundation
import XCTest

final class PerThreadTests: XCTestCase {
    private final class Counter {
        var count = 0
    }

    private static let counters = PerThread { Counter() }

    func testEachThreadKeepsItsOwnInstance() {
        let mine = Self.counters.value
        mine.count += 1
        let mineNow = mine.count
        XCTAssertTrue(Self.counters.value === mine, "the same instance on the same thread")
        let theirs = Self.onNewThread { () -> (ObjectIdentifier, Int) in
            let c = Self.counters.value
            c.count += 10
            return (ObjectIdentifier(c), Self.counters.value.count)
        }
        XCTAssertNotEqual(theirs.0, ObjectIdentifier(mine))
        XCTAssertEqual(theirs.1, 10, "a new thread starts from a fresh instance")
        XCTAssertEqual(Self.counters.value.count, mineNow, "another thread's changes are not seen here")
    }

    func testAThreadsInstanceIsReleasedWhenTheThreadEnds() {
        weak var released: Counter?
        Self.onNewThread { released = Self.counters.value }
        // onNewThread has joined the thread: its key destructors have run.
        XCTAssertNil(released)
    }

    /// Runs `body` on a new pthread and returns its result after joining it (a joined thread has
    /// run its pthread key destructors, which Foundation's Thread gives no way to wait for).
    private static func onNewThread<T>(_ body: @escaping () -> T) -> T {
        var result: T?
        let run = Work { result = body() }
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Work>.fromOpaque(context!).takeUnretainedValue().body()
                return nil
            }, Unmanaged.passUnretained(run).toOpaque())
        precondition(created == 0)
        pthread_join(thread, nil)
        return result!
    }

    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
