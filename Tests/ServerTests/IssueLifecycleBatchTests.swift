// The lifecycle over a batch of one issue's new occurrences (`IssueLifecycle.occurred`), as the
// alert evaluator applies it: the status is read once for the batch, and the first occurrence that
// reopens the issue decides — not the first of the batch.
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class IssueLifecycleBatchTests: XCTestCase {
    private var dir = ""
    private var store: SQLiteStore!
    private var projectID: Int64 = 0
    private var issueID: Int64 = 0

    override func setUpWithError() throws {
        dir = TestSupport.makeTemporaryDirectory("faultline-lifecycle-batch")
        store = try SQLiteStore(path: dir + "/faultline.sqlite")
        let p = try store.createProject(slug: "batch", name: "Batch")
        projectID = p.id
        let id = try XCTUnwrap(try store.storeIngest(event: StoreConformance.event(p.id, "e1", release: "1.0"), items: []))
        let o = try XCTUnwrap(try store.unprocessedOccurrences(limit: 10).first { $0.id == id })
        let frame = StackFrame(
            buildID: StoreConformance.buildID, offset: 0x10, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        try store.recordGrouping([StoreConformance.outcome(o, hash: "h", frames: [frame])])
        issueID = try XCTUnwrap(try store.issues(projectID: p.id, limit: 1, offset: 0).first?.id)
        // Releases in the order the server heard of them: 0.9, then 1.0, then 1.1.
        try store.writing { [projectID] c in
            for (i, v) in ["0.9", "1.0", "1.1"].enumerated() { try ReleaseOrder.note(c, projectID: projectID, version: v, now: Double(i + 1)) }
        }
    }

    override func tearDown() {
        store?.close()
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func occurred(_ occurrences: [(release: String?, received: Double)]) throws -> (LifecycleTransition, String?)? {
        try store.writing { [issueID, projectID] c in
            try IssueLifecycle.occurred(c, issueID: issueID, projectID: projectID, occurrences: occurrences, now: 2000)
        }
    }

    private var status: IssueStatus { get throws { try Lifecycle(store: store).state(issueID: issueID).status } }

    func testAnUnresolvedIssueStaysAsItIs() throws {
        XCTAssertNil(try occurred([("1.1", 1500), ("1.1", 1501)]))
        XCTAssertEqual(try status, .unresolved)
    }

    func testTheFirstOccurrenceInANewerReleaseReopensAResolvedIssueWhateverCameBeforeIt() throws {
        try Lifecycle(store: store).update(issueIDs: [issueID], status: .resolved, details: IssueStatusDetails(inRelease: "1.0"))
        let resolvedAt = try Lifecycle(store: store).state(issueID: issueID).changed
        // An older release, an occurrence without one, an occurrence sent before the resolution,
        // then the one that reopens it; the one after it changes nothing more.
        let t = try occurred([("0.9", resolvedAt + 1), (nil, resolvedAt + 1), ("1.1", resolvedAt - 100), ("1.1", resolvedAt + 2), ("1.0", resolvedAt + 3)])
        XCTAssertEqual(t?.0, .regression)
        XCTAssertEqual(t?.1, "1.1")
        XCTAssertEqual(try status, .unresolved)
        XCTAssertEqual(try Lifecycle(store: store).state(issueID: issueID).regressions, 1, "one regression for the batch")
    }

    func testABatchOfOlderReleasesLeavesAResolvedIssueResolved() throws {
        try Lifecycle(store: store).update(issueIDs: [issueID], status: .resolved, details: IssueStatusDetails(inRelease: "1.0"))
        let resolvedAt = try Lifecycle(store: store).state(issueID: issueID).changed
        XCTAssertNil(try occurred([("0.9", resolvedAt + 1), ("0.9", resolvedAt + 2)]))
        XCTAssertEqual(try status, .resolved)
    }

    /// One more occurrence of the issue, grouped, received at `received`.
    private func addOccurrence(_ name: String, received: Double) throws {
        var e = StoreConformance.event(projectID, name, release: "1.0")
        e.received = received
        let id = try XCTUnwrap(try store.storeIngest(event: e, items: []))
        let o = try XCTUnwrap(try store.unprocessedOccurrences(limit: 10).first { $0.id == id })
        let frame = StackFrame(
            buildID: StoreConformance.buildID, offset: 0x10, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        try store.recordGrouping([StoreConformance.outcome(o, hash: "h", frames: [frame])])
    }

    func testAnIgnoredIssueComesBackOnceItsCountRanOut() throws {
        try Lifecycle(store: store).update(issueIDs: [issueID], status: .ignored, details: IssueStatusDetails(ignoreCount: 2))
        let ignoredAt = try Lifecycle(store: store).state(issueID: issueID).changed
        try addOccurrence("e2", received: ignoredAt - 10)  // before the ignore: not counted
        try addOccurrence("e3", received: ignoredAt + 1)
        XCTAssertNil(try occurred([("1.0", ignoredAt + 1)]), "one occurrence since the ignore")
        XCTAssertEqual(try status, .ignored)
        try addOccurrence("e4", received: ignoredAt + 2)
        let t = try occurred([("1.0", 1600), ("1.1", 1601)])
        XCTAssertEqual(t?.0, .unmuted)
        XCTAssertEqual(t?.1, "1.0", "the batch's first occurrence brings it back")
        XCTAssertEqual(try status, .unresolved)
    }
}
