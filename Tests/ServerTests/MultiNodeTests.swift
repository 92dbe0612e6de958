// Several `faultline serve` processes on one PostgreSQL and one shared debug-file directory, as
// behind a load balancer: the same new crash sent to both at once is one issue, every acknowledged
// event is stored once, and a debug file uploaded to node A backfills occurrences ingested on B.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Synchronization

final class MultiNodeTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    typealias Node = CrashSafetyTests.ServeProcess

    func testTwoNodesOneDatabaseIngestConcurrentlyAndBackfillOnce() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-multinode")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let shared = work + "/debug-files"
        let program = try Fixtures.buildProgram(in: work)

        let a = try Node(dataDir: work + "/a", extra: ["--database", url, "--debug-files", shared])
        defer { a.process.end() }
        let bannerA = try a.banner()
        let b = try Node(dataDir: work + "/b", extra: ["--database", url, "--debug-files", shared])
        defer { b.process.end() }
        let bannerB = try b.banner()
        XCTAssertFalse(bannerB.contains("created project"), "the second node uses the first node's project: \(bannerB)")
        let ports = [try XCTUnwrap(a.port(bannerA)), try XCTUnwrap(b.port(bannerB))]
        let dsn = try DSN(parsing: String(try XCTUnwrap(bannerA.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        let token = String(try XCTUnwrap(bannerA.split(separator: "\n").first { $0.contains("server token") }).split(separator: " ").last!)

        // The same new crash on both nodes at once; some event ids sent to both nodes.
        let tally = Mutex<(acked: Set<String>, refused: Int)>(([], 0))
        let group = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for i in 0..<30 {
                    let id = i % 5 == 0 ? "\(String(repeating: "d", count: 24))\(String(format: "%08d", i))" : TestEvents.eventID()
                    let event = Fixtures.crashEvent(program, release: "r\(worker % 2)")
                    var e = event.objectValue ?? [:]
                    e["event_id"] = .string(id)
                    let body = Deflate.gzip(TestEvents.envelope(.object(e)))!
                    let port = ports[(worker + i) % 2]
                    let r = RawHTTP.send(
                        port: port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
                        headers: [
                            "Content-Type": "application/x-sentry-envelope", "Content-Encoding": "gzip",
                            "X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(dsn.publicKey.value)"
                        ], body: body)
                    tally.withLock { if r.status == 200 { $0.acked.insert(id) } else { $0.refused += 1 } }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        let (acked, refused) = tally.withLock { $0 }
        XCTAssertEqual(refused, 0)

        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let project = try XCTUnwrap(try store.project(idOrSlug: dsn.projectID))
        func waitGrouped() throws -> (occurrences: Int64, processed: Int64, issues: Int64) {
            let deadline = Date().addingTimeInterval(60)
            var c = try store.counts(projectID: project.id)
            while Date() < deadline, c.processed < c.occurrences || c.occurrences < Int64(acked.count) {
                usleep(50_000); c = try store.counts(projectID: project.id)
            }
            return c
        }
        let before = try waitGrouped()
        XCTAssertEqual(before.occurrences, Int64(acked.count), "every acknowledged event stored once")
        XCTAssertEqual(before.processed, before.occurrences)
        XCTAssertEqual(before.issues, 1, "one crash on two nodes is one issue")
        let issueBefore = try XCTUnwrap(try store.issues(projectID: project.id, limit: 10, offset: 0).first)
        XCTAssertEqual(issueBefore.count, before.occurrences)
        XCTAssertFalse(issueBefore.symbolicated)

        // The debug file arrives through node A; occurrences ingested on B are backfilled once.
        XCTAssertEqual(try TestServer.uploadDebugFile(program.path, port: ports[0], token: token), "ok")
        XCTAssertTrue(FileManager.default.fileExists(atPath: shared + "/.build-id"), "installed in the shared directory")
        let deadline = Date().addingTimeInterval(60)
        var issues: [IssueRecord] = []
        while Date() < deadline {
            issues = try store.issues(projectID: project.id, limit: 10, offset: 0)
            if issues.count == 1, issues[0].symbolicated, try store.backfills(limit: 10).allSatisfy({ $0.state == "done" }) { break }
            usleep(100_000)
        }
        XCTAssertEqual(issues.count, 1)
        XCTAssertEqual(issues.first?.symbolicated, true, "\(issues)")
        XCTAssertEqual(issues.first?.count, before.occurrences, "counts stay exact through the backfill")
        XCTAssertEqual(try store.issue(id: issueBefore.id)?.id, issues.first?.id, "the old issue id resolves to the symbolicated issue")
        let runs = try store.backfills(limit: 10).filter { $0.buildID == program.buildID }
        XCTAssertEqual(runs.count, 1, "one backfill cluster-wide: \(runs.map(\.state))")
        XCTAssertEqual(runs.first?.state, "done")

        // Node B sees the file node A installed: a new event on B groups symbolicated, into the same issue.
        let late = RawHTTP.send(
            port: ports[1], method: "POST", path: "/api/\(dsn.projectID)/envelope/",
            headers: [
                "Content-Type": "application/x-sentry-envelope",
                "X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(dsn.publicKey.value)"
            ],
            body: TestEvents.envelope(Fixtures.crashEvent(program)))
        XCTAssertEqual(late.status, 200)
        let after = try waitGrouped()
        XCTAssertEqual(after.issues, 1, "node B symbolicated with the file node A installed")
        XCTAssertEqual(try store.issues(projectID: project.id, limit: 10, offset: 0).first?.count, before.occurrences + 1)
    }

    /// Issue 29 item 20: behind a load balancer a browser's requests reach any node, so a session
    /// made on one node is a session on every node, and a logout on one ends it on all.
    func testALoginOnOneNodeIsASessionOnTheOtherAndALogoutEndsItOnBoth() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-multinode-sessions")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let a = try Node(dataDir: work + "/a", extra: ["--database", url])
        defer { a.process.end() }
        let bannerA = try a.banner()
        let b = try Node(dataDir: work + "/b", extra: ["--database", url])
        defer { b.process.end() }
        let (portA, portB) = (try XCTUnwrap(a.port(bannerA)), try XCTUnwrap(b.port(try b.banner())))
        let token = String(try XCTUnwrap(bannerA.split(separator: "\n").first { $0.contains("server token") }).split(separator: " ").last!)

        let login = try XCTUnwrap(TestServer.webLogin(port: portB, token: token))
        let onA = RawHTTP.send(port: portA, method: "GET", path: "/ui/projects", headers: ["Cookie": login.cookie])
        XCTAssertEqual(onA.status, 200, "node A knows node B's session")
        XCTAssertTrue(onA.text.contains("name=\"_csrf\" value=\"\(login.csrf)\""), "the same CSRF token on both nodes")
        let logout = RawHTTP.send(
            port: portA, method: "POST", path: "/ui/logout",
            headers: ["Cookie": login.cookie, "Content-Type": "application/x-www-form-urlencoded"], body: Data("_csrf=\(login.csrf)".utf8))
        XCTAssertEqual(logout.status, 303, logout.text)
        let afterOnB = RawHTTP.send(port: portB, method: "GET", path: "/ui/projects", headers: ["Cookie": login.cookie])
        XCTAssertEqual(afterOnB.status, 303, "logged out on A, so no session on B either")
        XCTAssertEqual(afterOnB.headers["location"], "/ui/login?next=%2Fui%2Fprojects")
    }
}
