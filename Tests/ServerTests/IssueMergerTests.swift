// The merge policy (IssueMerger) as unit tests over the in-memory core store: no database, so
// each case states only the stacks, the fingerprints and the issues they must end up in. The
// same double also passes the core checks of StoreConformance, so what it shows holds for the
// SQL stores too (StoreConformanceTests runs the merge cases there).
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineServerTestSupport
import XCTest

final class IssueMergerTests: XCTestCase {
    let buildID = StoreConformance.buildID

    func frame(_ offset: UInt64) -> StackFrame {
        StackFrame(buildID: buildID, offset: offset, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
    }

    func stackKey(_ offset: UInt64) -> String { StackSignature(exceptionType: "SIGSEGV", frames: [frame(offset)]).key }

    /// Stores and groups one event per entry: (event id, fingerprint hash, frame offset, release).
    func ingest(_ store: InMemoryStore, _ plan: [(String, String, UInt64, String)]) throws -> ProjectRecord {
        let p = try store.createProject(slug: "merges", name: "Merges")
        for (id, _, _, release) in plan { _ = try store.storeIngest(event: StoreConformance.event(p.id, id, release: release), items: []) }
        try store.recordGrouping(
            try store.unprocessedOccurrences(limit: 100).map { o in
                let (_, hash, offset, _) = try XCTUnwrap(plan.first { $0.0 == o.eventID })
                return StoreConformance.outcome(o, hash: hash, frames: [frame(offset)])
            })
        return p
    }

    func regroup(_ store: InMemoryStore, _ p: ProjectRecord, _ offset: UInt64, to hash: String) throws -> RegroupSummary {
        try IssueMerger.apply(
            [Regrouping(stackKey: stackKey(offset), projectID: p.id, fingerprint: Fingerprint(hash: hash, title: hash, culprit: hash, symbolicated: true))],
            in: store)
    }

    func testTheDoubleKeepsTheCoreStoreContract() throws {
        try StoreConformance.projectsKeysAndTokens(InMemoryStore())
        try StoreConformance.claims(InMemoryStore())
        try StoreConformance.sharedClaims(InMemoryStore())
        try StoreConformance.largeMergedGroupReads(InMemoryStore())
        try StoreConformance.aMergeSticks(InMemoryStore())
    }

    func testAStackMovingToAnotherIssuesFingerprintMergesItAndItsRowsFollow() throws {
        let store = InMemoryStore()
        let p = try ingest(store, [("a", "X", 1, "r1"), ("b", "X", 2, "r1"), ("c", "Y", 3, "r2"), ("d", "Y", 3, "r3")])
        let byHash = Dictionary(uniqueKeysWithValues: try store.issues(projectID: p.id, limit: 10, offset: 0).map { ($0.fingerprint, $0.id) })
        let (x, y) = (try XCTUnwrap(byHash["X"]), try XCTUnwrap(byHash["Y"]))

        let summary = try regroup(store, p, 3, to: "X")
        XCTAssertEqual(summary.merges, [IssueMergeRecord(issue: y, into: x)])
        XCTAssertEqual(summary.occurrencesMoved, 2, "both of Y's occurrences now count as X's")
        try StoreConformance.assertHolds(store, x, ["a", "b", "c", "d"], releases: ["r1", "r2", "r3"])
        XCTAssertEqual(try store.issue(id: y)?.id, x, "the merged id resolves to the live issue")
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 1)
    }

    func testAStackLeavingAnIssueThatHoldsOthersSplitsRowByRow() throws {
        let store = InMemoryStore()
        let p = try ingest(store, [("a", "X", 1, "r1"), ("b", "X", 2, "r2")])
        let x = try XCTUnwrap(try store.issues(projectID: p.id, limit: 10, offset: 0).first?.id)

        let split = try regroup(store, p, 1, to: "Z")
        XCTAssertEqual(split.issuesMerged, 0)
        XCTAssertEqual(split.occurrencesMoved, 1)
        let z = try XCTUnwrap(try store.issues(projectID: p.id, limit: 10, offset: 0).first { $0.fingerprint == "Z" }?.id)
        try StoreConformance.assertHolds(store, z, ["a"], releases: ["r1"])
        try StoreConformance.assertHolds(store, x, ["b"], releases: ["r2"])
    }

    func testAnEditThatThrowsChangesNothing() throws {
        let store = InMemoryStore()
        let p = try ingest(store, [("a", "X", 1, "r1")])
        struct Abort: Error {}
        XCTAssertThrowsError(
            try store.editIssues { e in
                _ = try e.createIssue(projectID: p.id, fingerprint: Fingerprint(hash: "N", title: "N", culprit: "N", symbolicated: false))
                throw Abort()
            })
        XCTAssertNil(try store.editIssues { e in try e.issueID(projectID: p.id, fingerprintHash: "N") }, "rolled back")
    }
}
