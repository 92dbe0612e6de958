// Two `faultline serve` nodes on one PostgreSQL behind a real load balancer (Debian's haproxy,
// round-robin, no session affinity), as docs/DEPLOY.md describes: a browser logs in once through
// the balancer and clicks through the pages, every other request landing on the other node, and
// never sees the login page; a form posted through it passes the CSRF check; logging out ends the
// session on both nodes.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LoadBalancerTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    typealias Node = CrashSafetyTests.ServeProcess

    static let binary = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// haproxy in the foreground, round-robin over `backends`; every response names the node that
    /// served it (`X-Faultline-Node`). The test makes the listening socket itself (127.0.0.1, port
    /// 0) and hands it to haproxy as its standard input (`bind fd@0`): no port is picked and then
    /// bound by another process, and a connection made before haproxy runs waits in the backlog.
    /// haproxy answers `/haproxy-ready` itself, without a backend, once it accepts.
    final class Balancer {
        let process = Process()
        let port: UInt16
        let log: String

        init(binary: String, backends: [(name: String, port: UInt16)], directory: String) throws {
            let (fd, port) = try LoopbackPort.listeningSocket()
            self.port = port
            let config = directory + "/haproxy-\(port).cfg"
            log = directory + "/haproxy-\(port).log"
            var text = """
                global
                    maxconn 256
                defaults
                    mode http
                    timeout connect 5s
                    timeout client 60s
                    timeout server 60s
                frontend web
                    bind fd@0
                    monitor-uri /haproxy-ready
                    default_backend nodes
                backend nodes
                    balance roundrobin
                    http-response set-header X-Faultline-Node %s

                """
            for b in backends { text += "    server \(b.name) 127.0.0.1:\(b.port)\n" }
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["-db", "-V", "-f", config]  // -db: foreground, no daemon; -V: say what it does
            let socket = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            process.standardInput = socket
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardError = process.standardOutput
            try process.run()
            try? socket.close()  // haproxy holds its own copy; once it ends, connections are refused, not left waiting
            try awaitServing()
        }

        /// Waits until haproxy answers its own `/haproxy-ready`; a haproxy that ended, or did not
        /// answer in time, fails with its log.
        func awaitServing(timeout: TimeInterval = 60) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                guard process.isRunning else { break }
                let answer = RawHTTP.send(port: port, method: "GET", path: "/haproxy-ready", headers: [:], body: Data())
                if answer.status == 200 { return }
                usleep(20_000)
            }
            let end = process.end()
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            struct NotServing: Error, CustomStringConvertible { let description: String }
            throw NotServing(description: "haproxy did not answer within \(timeout) s (\(end)): \(output)")
        }
    }

    func testLoggedInOnceThroughARoundRobinBalancerTwentyPagesNeverShowTheLoginPage() throws {
        // Not a skip: tools/setup and .ci/run install haproxy, so its absence is a broken set-up.
        guard let haproxy = Self.binary else { return XCTFail("haproxy is not installed (tools/setup and .ci/run install it)") }
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-balancer")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let a = try Node(dataDir: work + "/a", extra: ["--database", url])
        defer { a.process.end() }
        let bannerA = try a.banner()
        let b = try Node(dataDir: work + "/b", extra: ["--database", url])
        defer { b.process.end() }
        let (portA, portB) = (try XCTUnwrap(a.port(bannerA)), try XCTUnwrap(b.port(try b.banner())))
        let token = String(try XCTUnwrap(bannerA.split(separator: "\n").first { $0.contains("server token") }).split(separator: " ").last!)
        let dsn = try DSN(parsing: String(try XCTUnwrap(bannerA.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        let balancer = try Balancer(binary: haproxy, backends: [("a", portA), ("b", portB)], directory: work)
        defer { balancer.process.end() }
        let port = balancer.port

        // Something to click on, sent through the balancer too: a crash inside a traced request.
        let trace = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let now = Date().timeIntervalSince1970
        let transaction: JSONValue = [
            "type": "transaction", "transaction": "GET /checkout", "start_timestamp": .double(now), "timestamp": .double(now + 0.2),
            "contexts": ["trace": ["trace_id": .string(trace), "span_id": "aaaaaaaaaaaaaaaa", "op": "http.server"]]
        ]
        var event = TestEvents.native(offsets: [0x1000, 0x2000], release: "shop@1.0", functions: ["main", "checkout"])
        event["contexts"] = ["trace": ["trace_id": .string(trace), "span_id": "aaaaaaaaaaaaaaaa"]]
        let auth = ["X-Sentry-Auth": dsn.authHeader(client: "balancer/1"), "Content-Type": "application/x-sentry-envelope"]
        for body in [
            TestEvents.envelope(event), Envelope(header: [:], items: [Envelope.Item(type: "transaction", payload: transaction.serialized())]).serialized()
        ] {
            let r = RawHTTP.send(port: port, method: "POST", path: "/api/\(dsn.projectID)/envelope/", headers: auth, body: body)
            XCTAssertEqual(r.status, 200, r.text)
        }
        let api = ["Authorization": "Bearer \(token)"]
        let slug = try XCTUnwrap(
            try JSONValue.parse(Data(RawHTTP.send(port: port, method: "GET", path: "/api/0/projects/", headers: api).text.utf8))[0]?["slug"]?.stringValue)
        var issueID: String?
        let deadline = Date().addingTimeInterval(60)
        while issueID == nil, Date() < deadline {
            let r = RawHTTP.send(port: port, method: "GET", path: "/api/0/projects/faultline/\(slug)/issues/", headers: api)
            issueID = (try? JSONValue.parse(Data(r.text.utf8)))?[0]?["id"]?.stringValue
            if issueID == nil { usleep(50_000) }
        }
        let issue = try XCTUnwrap(issueID, "the crash was grouped")

        let login = try XCTUnwrap(TestServer.webLogin(port: port, token: token), "logged in through the balancer")
        let project = "/ui/projects/\(slug)"
        let pages = [
            "/ui/projects", "\(project)/issues", "/ui/issues/\(issue)", "\(project)/traces", "\(project)/traces/\(trace)",
            "\(project)/logs", "\(project)/health", "\(project)/alerts", "/ui/debug-files", "\(project)/traces?name=GET%20%2Fcheckout",
            "\(project)/issues?status=all", "/ui/issues/\(issue)", "\(project)/logs?trace=\(trace)", "\(project)/traces?status=ok",
            "/ui/projects", "\(project)/health", "/ui/debug-files", "\(project)/issues?sort=count", "\(project)/traces/\(trace)",
            "/ui/issues/\(issue)"
        ]
        XCTAssertEqual(pages.count, 20)
        var servedBy: [String: Int] = [:]
        for path in pages {
            let r = RawHTTP.send(port: port, method: "GET", path: path, headers: ["Cookie": login.cookie])
            XCTAssertEqual(r.status, 200, "\(path): \(r.status) \(r.headers["location"] ?? "")")
            XCTAssertFalse(r.text.contains("action=\"/ui/login\""), "\(path) showed the login page")
            XCTAssertTrue(r.text.contains("name=\"_csrf\" value=\"\(login.csrf)\""), "\(path): one session, one CSRF token on every node")
            servedBy[r.headers["x-faultline-node"] ?? "?", default: 0] += 1
        }
        XCTAssertEqual(servedBy, ["a": 10, "b": 10], "round-robin: every other page from the other node")
        XCTAssertTrue(
            RawHTTP.send(port: port, method: "GET", path: "\(project)/traces/\(trace)", headers: ["Cookie": login.cookie]).text.contains("/ui/issues/\(issue)"),
            "the trace page places the crash")

        // A form through the balancer: its CSRF token is the session's, whichever node checks it.
        let resolve = RawHTTP.send(
            port: port, method: "POST", path: "/ui/issues/\(issue)/resolve",
            headers: ["Cookie": login.cookie, "Content-Type": "application/x-www-form-urlencoded"], body: Data("_csrf=\(login.csrf)".utf8))
        XCTAssertEqual(resolve.status, 303, resolve.text)
        XCTAssertNotEqual(resolve.headers["location"], "/ui/login")

        // Logging out through one node ends the session on both.
        let logout = RawHTTP.send(
            port: port, method: "POST", path: "/ui/logout",
            headers: ["Cookie": login.cookie, "Content-Type": "application/x-www-form-urlencoded"], body: Data("_csrf=\(login.csrf)".utf8))
        XCTAssertEqual(logout.status, 303)
        var after = Set<String>()
        for _ in 0..<2 {
            let r = RawHTTP.send(port: port, method: "GET", path: "/ui/projects", headers: ["Cookie": login.cookie])
            XCTAssertEqual(r.headers["location"], "/ui/login?next=%2Fui%2Fprojects", "logged out on every node")
            after.insert(r.headers["x-faultline-node"] ?? "?")
        }
        XCTAssertEqual(after, ["a", "b"])
    }
}
