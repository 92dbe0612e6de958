// Grouping on several nodes at once on one PostgreSQL (no node waits for another's grouping: each
// holds a share of the regrouping claim, and the database keeps their batches apart): every
// acknowledged event is grouped exactly once, each fingerprint is one issue whose count is exact —
// with the same occurrences offered to several nodes at once, with a backfill regrouping while the
// nodes group, and through a real load balancer (haproxy) in front of three nodes.
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

final class ParallelGroupingTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    /// Three stores on one database stand for three nodes. Every occurrence is offered by two of
    /// them, in different orders and batches, two threads per store, all at once.
    func testThreeNodesGroupingOverlappingBatchesCountEachOccurrenceOnce() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let stores = try (0..<3).map { _ in try PostgresStore(url: url, connections: 4) }
        defer { stores.forEach { $0.close() } }
        let p = try stores[0].createProject(slug: "parallel", name: "Parallel")
        let n = 600, fingerprints = 12
        var outcomes: [GroupingOutcome] = []
        for i in 0..<n {
            let id = try XCTUnwrap(try stores[i % 3].storeIngest(event: StoreConformance.event(p.id, "par-\(i)", release: "r\(i % 5)"), items: []))
            let o = try XCTUnwrap(try stores[0].occurrence(id: id))
            // Two stacks per fingerprint: issues are per fingerprint, stacks per distinct frames.
            let frame = StackFrame(
                buildID: StoreConformance.buildID, offset: UInt64(0x100 + i % (2 * fingerprints)), isReturnAddress: false, inApp: true,
                module: "/app", clientFunction: nil)
            outcomes.append(StoreConformance.outcome(o, hash: "crash-\(i % fingerprints)", frames: [frame]))
        }
        let failures = Mutex<[Error]>([])
        let group = DispatchGroup()
        for (k, store) in stores.enumerated() {
            let offered = outcomes.enumerated().filter { $0.offset % 3 == k || ($0.offset + 1) % 3 == k }.map(\.element)
            for slice in [offered.shuffled(), offered.reversed()] {
                DispatchQueue.global().async(group: group) {
                    for start in stride(from: 0, to: slice.count, by: 64) {
                        do { try store.recordGrouping(Array(slice[start..<min(start + 64, slice.count)])) } catch {
                            failures.withLock { $0.append(error) }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(failures.withLock { $0.map { "\($0)" } }, [])
        let counts = try stores[1].counts(projectID: p.id)
        XCTAssertEqual(counts.occurrences, Int64(n))
        XCTAssertEqual(counts.processed, Int64(n), "every occurrence grouped")
        let issues = try stores[2].issues(projectID: p.id, limit: 100, offset: 0)
        XCTAssertEqual(issues.count, fingerprints, "one issue per fingerprint")
        for issue in issues {
            XCTAssertEqual(issue.count, Int64(n / fingerprints), "\(issue.fingerprint): each occurrence counted once")
            XCTAssertEqual(try stores[0].occurrences(issueID: issue.id, limit: 1000, offset: 0).count, n / fingerprints, issue.fingerprint)
            XCTAssertEqual(Set(issue.releases), Set((0..<5).map { "r\($0)" }), issue.fingerprint)
        }
    }

    typealias Cluster = ClusterTests.Cluster

    /// Sends `events` (each a fingerprint's index and its event) from four threads, round-robin
    /// over `ports`; returns how many of each fingerprint were acknowledged. `midway` runs once a
    /// third have been acknowledged, while the senders go on.
    func send(
        _ events: [(fingerprint: Int, event: JSONValue)], to ports: [UInt16], cluster: Cluster, midway: (@Sendable () -> Void)? = nil
    ) -> (acked: [Int: Int], refused: Int, servedBy: [String: Int]) {
        let tally = Mutex<(acked: [Int: Int], refused: Int, servedBy: [String: Int], total: Int)>(([:], 0, [:], 0))
        let midwayRan = Mutex(false)
        let group = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for (i, e) in events.enumerated() where i % 4 == worker {
                    let r = cluster.send(e.event, to: ports[i % ports.count])
                    let total = tally.withLock { t in
                        if r.status == 200 { t.acked[e.fingerprint, default: 0] += 1 } else { t.refused += 1 }
                        t.servedBy[r.headers["x-faultline-node"] ?? "-", default: 0] += 1
                        t.total += 1
                        return t.total
                    }
                    let reachedMidway =
                        total >= events.count / 3
                        && midwayRan.withLock { ran in
                            let first = !ran
                            ran = true
                            return first
                        }
                    if reachedMidway { midway?() }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 180), .success)
        return tally.withLock { ($0.acked, $0.refused, $0.servedBy) }
    }

    /// Waits until every stored occurrence is grouped and no backfill is open; then checks that
    /// every acknowledged event is stored and grouped once and every issue's count is exact.
    func assertGroupedOnce(_ store: PostgresStore, project: Int64, acked: [Int: Int], issues expected: Int) throws -> [IssueRecord] {
        let total = Int64(acked.values.reduce(0, +))
        let deadline = Date().addingTimeInterval(120)
        var c = try store.counts(projectID: project)
        while Date() < deadline {
            let open = try store.backfills(limit: 100).contains { $0.state == "queued" || $0.state == "running" }
            if !open, c.occurrences >= total, c.processed == c.occurrences { break }
            usleep(50_000)
            c = try store.counts(projectID: project)
        }
        XCTAssertEqual(c.occurrences, total, "every acknowledged event stored once")
        XCTAssertEqual(c.processed, c.occurrences, "and grouped")
        let issues = try store.issues(projectID: project, limit: 100, offset: 0)
        XCTAssertEqual(issues.count, expected, "one issue per fingerprint: \(issues.map { ($0.title, $0.count) })")
        XCTAssertEqual(issues.reduce(0) { $0 + $1.count }, total, "each occurrence counted once")
        for issue in issues {
            XCTAssertEqual(Int64(try store.occurrences(issueID: issue.id, limit: 10_000, offset: 0).count), issue.count, issue.title)
        }
        XCTAssertEqual(Set(issues.map(\.count)), Set(acked.values.map(Int64.init)), "each fingerprint's issue counts its acknowledged events")
        return issues
    }

    /// Three `faultline serve` processes on one database take a burst of five crashes at once;
    /// one of them is the fixture program's, whose debug file is uploaded a third of the way in,
    /// so a backfill regroups its occurrences while all three nodes keep grouping.
    func testThreeNodesGroupABurstOnceWhileABackfillRegroups() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-parallel-grouping")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        let cluster = try Cluster(count: 3, url: url, work: work)
        defer { cluster.stop() }
        var events: [(fingerprint: Int, event: JSONValue)] = []
        for i in 0..<240 {
            let k = i % 5
            events.append((k, k == 0 ? Fixtures.crashEvent(program, release: "r\(i % 3)") : TestEvents.native(offsets: [0x1000 + UInt64(k) * 0x40, 0x2000])))
        }
        let upload = Mutex<String?>(nil)
        let (acked, refused, _) = send(events, to: cluster.ports, cluster: cluster) {
            let answer = try? TestServer.uploadDebugFile(program.path, port: cluster.ports[1], token: cluster.token)
            upload.withLock { $0 = answer ?? "failed" }
        }
        XCTAssertEqual(refused, 0)
        XCTAssertEqual(upload.withLock { $0 }, "ok")
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let project = try XCTUnwrap(try store.project(idOrSlug: cluster.dsn.projectID))
        let issues = try assertGroupedOnce(store, project: project.id, acked: acked, issues: 5)
        let runs = try store.backfills(limit: 10).filter { $0.buildID == program.buildID }
        XCTAssertEqual(runs.map(\.state), ["done"], "one backfill cluster-wide")
        let crash = try XCTUnwrap(issues.first { $0.symbolicated }, "the program's crash is symbolicated: \(issues.map(\.title))")
        XCTAssertEqual(crash.count, Int64(acked[0] ?? -1), "its occurrences from before and after the upload are one issue")
    }

    /// Three nodes behind Debian's haproxy (round-robin): a burst of four crashes through the
    /// balancer reaches every node, and every acknowledged event is grouped once.
    func testThreeNodesBehindHaproxyGroupEveryAcknowledgedEventOnce() throws {
        // Not a skip: tools/setup and .ci/run install haproxy, so its absence is a broken set-up.
        guard let haproxy = LoadBalancerTests.binary else { return XCTFail("haproxy is not installed (tools/setup and .ci/run install it)") }
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-parallel-balancer")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let cluster = try Cluster(count: 3, url: url, work: work)
        defer { cluster.stop() }
        let balancer = try LoadBalancerTests.Balancer(
            binary: haproxy, backends: cluster.ports.enumerated().map { ("node\($0.offset)", $0.element) }, directory: work)
        defer { balancer.process.end() }
        let events = (0..<180).map { i in (i % 4, TestEvents.native(offsets: [0x3000 + UInt64(i % 4) * 0x40, 0x4000])) }
        let (acked, refused, servedBy) = send(events, to: [balancer.port], cluster: cluster)
        XCTAssertEqual(refused, 0)
        XCTAssertEqual(Set(servedBy.keys), ["node0", "node1", "node2"], "the balancer spread the burst over the three nodes: \(servedBy)")
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let project = try XCTUnwrap(try store.project(idOrSlug: cluster.dsn.projectID))
        _ = try assertGroupedOnce(store, project: project.id, acked: acked, issues: 4)
    }
}
