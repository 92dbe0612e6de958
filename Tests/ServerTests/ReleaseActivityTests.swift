// A data directory from before schema migration 17 gets each release's first and last event and
// its new issues from the occurrences already there (Lifecycle/ReleaseActivity).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ReleaseActivityTests: XCTestCase {
    func testTheMigrationFillsTheTallyFromTheOccurrencesAlreadyStored() throws {
        let dir = TestSupport.makeTemporaryDirectory("release-activity")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/faultline.sqlite"
        let store = try SQLiteStore(path: path)
        let p = try store.createProject(slug: "old", name: "Old data")
        // Issue A first in 1.0 (then again in 2.0), B first in 2.0, C merged into A (first in 2.0:
        // part of A, which is not new there); one occurrence with no release.
        let plan: [(String, String?, Double)] = [("A", "1.0", 10), ("A", "2.0", 30), ("B", "2.0", 20), ("C", "2.0", 25), ("B", nil, 40)]
        for (i, (hash, release, received)) in plan.enumerated() {
            var e = StoreConformance.event(p.id, "e\(i)", release: release ?? "")
            e.release = release
            e.received = received
            _ = try store.storeIngest(event: e, items: [])
            let o = try XCTUnwrap(try store.unprocessedOccurrences(limit: 10).first { $0.eventID == "e\(i)" })
            try store.recordGrouping([
                StoreConformance.outcome(
                    o, hash: hash,
                    frames: [
                        StackFrame(
                            buildID: StoreConformance.buildID, offset: UInt64(i), isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
                    ])
            ])
        }
        let ids = Dictionary(uniqueKeysWithValues: try store.issues(projectID: p.id, limit: 10, offset: 0).map { ($0.fingerprint, $0.id) })
        try IssueMerger.merge(ids["C"]!, into: ids["A"]!, in: store)
        store.close()

        // Back to schema 16, as a binary from before left it (its evaluator never ran: no cursor).
        let c = try SQLiteConnection(path: path)
        try c.exec("DROP TABLE release_activity; DELETE FROM alert_cursor; PRAGMA user_version=16")
        let reopened = try SQLiteStore(path: path)
        defer { reopened.close() }
        let tallies = try reopened.reading { c in
            (
                try ReleaseActivity.tally(c, projectIDs: [p.id], version: "1.0"), try ReleaseActivity.tally(c, projectIDs: [p.id], version: "2.0"),
                try ReleaseActivity.tally(c, projectIDs: [p.id], version: "3.0")
            )
        }
        XCTAssertEqual(tallies.0, ReleaseActivity.Tally(firstEvent: 10, lastEvent: 10, newGroups: 1))
        XCTAssertEqual(tallies.1, ReleaseActivity.Tally(firstEvent: 20, lastEvent: 30, newGroups: 1), "B only: C belongs to A")
        XCTAssertNil(tallies.2)
        let cursor = try reopened.reading { try AlertRows.cursor($0) }
        XCTAssertEqual(cursor, 5, "the evaluator goes on from where the migration counted")
    }
}
