// Alerts across process deaths and nodes, with `faultline serve` processes: deliveries queued when
// the server is killed go out after the restart, each once; two nodes on one database send each
// alert once. Rules are added with `faultline alerts` as an operator would.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

/// What both tests need: a node's credentials from its banner, a rule, events, the deliveries.
enum AlertProcessSupport {
    typealias Node = CrashSafetyTests.ServeProcess

    static func token(_ banner: String) -> String? {
        banner.split(separator: "\n").first { $0.contains("server token") }.map { String($0.split(separator: " ").last ?? "") }
    }

    static func addRule(dataDir: String, databaseArguments: [String], hook: UInt16) throws {
        let o = try TestSupport.run(
            TestSupport.product("faultline"),
            ["alerts", "--data-dir", dataDir] + databaseArguments
                + ["add", "--project", "default", "--webhook", "http://127.0.0.1:\(hook)/alerts", "--on", "new-issue"])
        XCTAssertEqual(o.exitCode, 0, o.description)
    }

    static func sendIssues(port: UInt16, projectID: String, key: String, functions: [String]) {
        for fn in functions {
            let body = TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20], functions: ["main", fn]))
            let r = RawHTTP.send(
                port: port, method: "POST", path: "/api/\(projectID)/envelope/",
                headers: ["X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(key)"], body: body)
            XCTAssertEqual(r.status, 200, r.text)
        }
    }

    static func deliveries(port: UInt16, token: String) -> [JSONValue] {
        let r = RawHTTP.send(
            port: port, method: "GET", path: "/api/0/projects/faultline/default/alerts/deliveries/",
            headers: ["Authorization": "Bearer \(token)"])
        return (try? JSONValue.parse(r.body).arrayValue) ?? nil ?? []
    }

    /// Polls until `done` holds (every 50 ms, at most `timeout` seconds).
    static func wait(_ what: String, timeout: TimeInterval = 60, _ done: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while !done() {
            if Date() > deadline { return XCTFail("timed out waiting for \(what)") }
            usleep(50_000)
        }
    }
}

final class AlertRestartTests: XCTestCase {
    typealias S = AlertProcessSupport

    func testAlertsQueuedWhenTheServerIsKilledAreSentOnceAfterTheRestart() throws {
        let work = TestSupport.makeTemporaryDirectory("alert-restart")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let dataDir = work + "/data"
        let hook = try ScriptedHTTPServer { _ in .status(503) }
        defer { hook.stop() }
        var node = try S.Node(dataDir: dataDir)
        let banner = try node.banner()
        let port = try XCTUnwrap(node.port(banner)), token = try XCTUnwrap(S.token(banner))
        let dsn = try DSN(parsing: String(try XCTUnwrap(banner.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        try S.addRule(dataDir: dataDir, databaseArguments: try TestDatabase.serveArguments(dataDirectory: dataDir), hook: hook.port)

        let functions = (0..<5).map { "handler\($0)" }
        S.sendIssues(port: port, projectID: dsn.projectID, key: dsn.publicKey.value, functions: functions)
        // Every alert tried once and refused (503), its failure recorded: queued with a back-off.
        S.wait("five failed first attempts") {
            let d = S.deliveries(port: port, token: token)
            return d.count == 5 && d.allSatisfy { $0["attempts"]?.int64Value == 1 && $0["state"]?.stringValue == "pending" }
        }
        node.process.end(with: SIGKILL)
        hook.setScript { _ in .status(200) }

        node = try S.Node(dataDir: dataDir)
        defer { node.process.end() }
        let again = try XCTUnwrap(node.port(try node.banner()))
        S.wait("every queued alert sent after the restart") {
            let d = S.deliveries(port: again, token: token)
            return d.count == 5 && d.allSatisfy { $0["state"]?.stringValue == "sent" }
        }
        let accepted = hook.requests.dropFirst(5).compactMap { try? JSONValue.parse($0.body)["issue"]?["title"]?.stringValue }
        XCTAssertEqual(accepted.count, 5, "none twice")
        XCTAssertEqual(Set(accepted), Set(functions.map { "SIGSEGV in \($0)" }))
        // What an operator reads: each delivery with its time, state, tries and what it said.
        let listed = try TestSupport.run(
            TestSupport.product("faultline"),
            ["alerts", "--data-dir", dataDir] + (try TestDatabase.serveArguments(dataDirectory: dataDir)) + ["list", "--deliveries"])
        let lines = listed.stdout.split(separator: "\n").filter { $0.hasPrefix("delivery ") }
        XCTAssertEqual(lines.count, 5, listed.description)
        for line in lines {
            XCTAssertTrue(line.contains("\tsent\tattempts 2\tNew issue DEFAULT-") && line.contains(": SIGSEGV in handler"), String(line))
        }
    }
}

final class AlertClusterTests: XCTestCase {
    typealias S = AlertProcessSupport
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    func testTwoNodesOnOneDatabaseSendEachAlertOnce() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("alert-cluster")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let hook = try ScriptedHTTPServer()
        defer { hook.stop() }
        let a = try S.Node(dataDir: work + "/a", extra: ["--database", url])
        defer { a.process.end() }
        let bannerA = try a.banner()
        let b = try S.Node(dataDir: work + "/b", extra: ["--database", url])
        defer { b.process.end() }
        let ports = [try XCTUnwrap(a.port(bannerA)), try XCTUnwrap(b.port(try b.banner()))]
        let token = try XCTUnwrap(S.token(bannerA))
        let dsn = try DSN(parsing: String(try XCTUnwrap(bannerA.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        try S.addRule(dataDir: work + "/a", databaseArguments: ["--database", url], hook: hook.port)

        // Three new issues, each seen on both nodes.
        let functions = ["alpha", "beta", "gamma"]
        for port in ports { S.sendIssues(port: port, projectID: dsn.projectID, key: dsn.publicKey.value, functions: functions) }
        S.wait("three alerts sent") {
            let d = S.deliveries(port: ports[0], token: token)
            return d.count == 3 && d.allSatisfy { $0["state"]?.stringValue == "sent" }
        }
        // Both nodes' evaluators have seen every occurrence: the cursor is past the last one.
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        S.wait("the evaluation cursor past every occurrence") {
            (try? store.reading { c -> Bool in
                let last = try c.first("SELECT max(id) FROM occurrences") { $0.int(0) } ?? 0
                return (try AlertRows.cursor(c) ?? 0) >= last
            }) ?? false
        }
        let titles = hook.requests.compactMap { try? JSONValue.parse($0.body)["issue"]?["title"]?.stringValue }
        XCTAssertEqual(titles.sorted(), functions.map { "SIGSEGV in \($0)" }, "each alert once, from one node")
        XCTAssertEqual(S.deliveries(port: ports[1], token: token).count, 3)
    }
}
