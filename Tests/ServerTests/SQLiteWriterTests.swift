// The SQLite group commit: ingest jobs in a batch run without savepoints; when one fails the batch
// runs again with each in its own — the others commit, each caller gets its own outcome, and the
// batch's other jobs (not rerunnable) run once.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineTestSupport
import Synchronization

final class SQLiteWriterTests: XCTestCase {
    /// A writer over a fresh WAL database with one table `t(v)`, and the directory to remove.
    private static func makeWriter() throws -> (SQLiteWriter, String) {
        let dir = TestSupport.makeTemporaryDirectory("faultline-writer")
        let c = try SQLiteConnection(path: dir + "/w.sqlite")
        try c.exec("PRAGMA journal_mode=WAL; CREATE TABLE t(v INTEGER NOT NULL)")
        return (SQLiteWriter(connection: c), dir)
    }

    func testAFailingIngestJobInABatchLeavesTheOthersCommitted() throws {
        let (writer, dir) = try Self.makeWriter()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        defer { writer.stop() }
        // Hold the writer in a first batch so the next jobs queue up and run as one batch.
        let hold = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        writer.async({ _ in
            holding.signal(); hold.wait()
        })
        holding.wait()
        struct Refused: Error {}
        let outcomes = Mutex<[Int: Bool]>([:])
        let group = DispatchGroup()
        for i in 0..<8 {
            group.enter()
            Thread.detachNewThread {  // a thread each: GCD's pool grows slowly past blocked workers
                defer { group.leave() }
                let ok =
                    (try? writer.sync(rerunnable: true) { c -> Int in
                        _ = try c.run("INSERT INTO t(v) VALUES(?)", .int(Int64(i)))
                        if i == 5 { throw Refused() }  // after its insert: the insert must be undone too
                        return i
                    }) != nil
                outcomes.withLock { $0[i] = ok }
            }
        }
        // A job that is not an ingest's, in the same batch: it must run once and commit.
        let otherRuns = Mutex(0)
        writer.async({ c in
            otherRuns.withLock { $0 += 1 }; _ = try c.run("INSERT INTO t(v) VALUES(100)")
        })
        // Every job queued (the writer is still held), then one batch.
        let deadline = Date().addingTimeInterval(30)
        while writer.queued < 9 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(writer.queued, 9, "the jobs never all queued")
        hold.signal()
        group.wait()
        XCTAssertEqual(outcomes.withLock { $0 }, Dictionary(uniqueKeysWithValues: (0..<8).map { ($0, $0 != 5) }))
        var stored: [Int64] = []
        try writer.sync { c in try c.query("SELECT v FROM t ORDER BY v") { stored.append($0.int(0)) } }
        XCTAssertEqual(stored, [0, 1, 2, 3, 4, 6, 7, 100])
        XCTAssertEqual(otherRuns.withLock { $0 }, 1)
    }

    /// A job given while the store closes is refused at once, not left waiting for a thread that ended.
    func testAJobAfterStopIsRefused() throws {
        let (writer, dir) = try Self.makeWriter()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writer.sync { c in _ = try c.run("INSERT INTO t(v) VALUES(1)") }
        writer.stop()
        XCTAssertThrowsError(try writer.sync { c in _ = try c.run("INSERT INTO t(v) VALUES(2)") }) { error in
            XCTAssertEqual(error as? StoreError, .closed)
        }
        let refused = Mutex<Error?>(nil)
        writer.async({ _ in XCTFail("a job after stop ran") }, done: { e in refused.withLock { $0 = e } })
        XCTAssertEqual(refused.withLock { $0 } as? StoreError, .closed)
    }
}
