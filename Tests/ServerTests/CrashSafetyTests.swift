// kill -9 during a burst of ingests: after a restart every acknowledged event is stored and
// gets grouped (the worker picks up what was acknowledged but not yet grouped).
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Synchronization

final class CrashSafetyTests: XCTestCase {
    /// A `faultline serve` child process; stdout goes to a file we poll.
    final class ServeProcess {
        let process = Process()
        let out: String
        init(dataDir: String, extra: [String] = []) throws {
            out = dataDir + "-stdout-\(UUID().uuidString.prefix(6))"
            FileManager.default.createFile(atPath: out, contents: nil)
            process.executableURL = URL(fileURLWithPath: TestSupport.product("faultline"))
            process.arguments =
                ["serve", "--data-dir", dataDir, "--port", "0", "--durability", "full", "--install-cap", "0"]
                + (try TestDatabase.serveArguments(dataDirectory: dataDir)) + extra
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            process.standardError = FileHandle.nullDevice
            try process.run()
        }
        /// Waits for the banner and returns it.
        func banner(timeout: TimeInterval = 20) throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let s = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
                if s.contains("listening on"), !s.contains("created project") || s.contains("server token") { return s }
                usleep(20_000)
            }
            struct DidNotStart: Error, CustomStringConvertible { let description: String }
            throw DidNotStart(
                description: "faultline serve did not start within \(timeout) s; its output: " + ((try? String(contentsOfFile: out, encoding: .utf8)) ?? ""))
        }
        func port(_ banner: String) -> UInt16? {
            guard let r = banner.range(of: "127.0.0.1:") else { return nil }
            return UInt16(banner[r.upperBound...].prefix { $0.isNumber })
        }

        /// What a fresh server's banner names: its port, the default project's DSN and the
        /// server token (shown once).
        struct Endpoints {
            let port: UInt16
            let dsn: DSN
            let token: String
            var parts: (port: UInt16, dsn: DSN, token: String) { (port, dsn, token) }
        }

        func endpoints(timeout: TimeInterval = 20) throws -> Endpoints {
            let text = try banner(timeout: timeout)
            let lines = text.split(separator: "\n")
            return Endpoints(
                port: try XCTUnwrap(port(text), text), dsn: try DSN(parsing: String(try XCTUnwrap(lines.first { $0.hasPrefix("DSN: ") }, text).dropFirst(5))),
                token: String(try XCTUnwrap(lines.first { $0.contains("server token") }, text).split(separator: " ").last ?? ""))
        }
        deinit { try? FileManager.default.removeItem(atPath: out) }
    }

    func testKill9DuringBurstLosesNoAcknowledgedEvent() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-kill9")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try ServeProcess(dataDir: dir)
        let banner = try first.banner()
        let port = try XCTUnwrap(first.port(banner))
        let dsn = try DSN(parsing: String(try XCTUnwrap(banner.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        let token = String(try XCTUnwrap(banner.split(separator: "\n").first { $0.contains("server token") }).split(separator: " ").last!)

        let tally = Mutex<(acked: [String], failed: Int)>(([], 0))
        let stopAt = Date().addingTimeInterval(1.5)
        let group = DispatchGroup()
        for worker in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var n = 0
                while Date() < stopAt.addingTimeInterval(1.0) {
                    let id = TestEvents.eventID()
                    let env = TestEvents.envelope(TestEvents.native(eventID: id, offsets: [UInt64(worker * 16 + n % 7) + 1]))
                    let r = RawHTTP.send(
                        port: port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
                        headers: ["X-Sentry-Auth": dsn.authHeader(client: "kill9/1")], body: env)
                    tally.withLock { if r.status == 200 { $0.acked.append(id) } else { $0.failed += 1 } }
                    n += 1
                    if r.status == -1 { break }
                }
            }
        }
        // Kill in the middle of the burst.
        Thread.sleep(forTimeInterval: 0.8)
        kill(first.process.processIdentifier, SIGKILL)
        let firstEnd = first.process.awaitEnd()
        group.wait()
        XCTAssertEqual(firstEnd.signal, SIGKILL, firstEnd.description)
        let ackedIDs = tally.withLock { $0.acked }
        XCTAssertGreaterThan(ackedIDs.count, 20, "the burst should have been acknowledged in part before the kill")

        let second = try ServeProcess(dataDir: dir)
        let banner2 = try second.banner()
        let port2 = try XCTUnwrap(second.port(banner2))
        defer { second.process.end() }
        for id in ackedIDs {
            let r = RawHTTP.send(
                port: port2, method: "GET", path: "/api/0/projects/faultline/\(dsn.projectID)/events/\(id)/",
                headers: ["Authorization": "Bearer \(token)"])
            XCTAssertEqual(r.status, 200, "acknowledged event \(id) is missing after kill -9")
        }
        // Everything stored gets grouped after the restart.
        let deadline = Date().addingTimeInterval(30)
        var project: JSONValue = .null
        while Date() < deadline {
            project =
                RawHTTP.send(
                    port: port2, method: "GET", path: "/api/0/projects/faultline/\(dsn.projectID)/",
                    headers: ["Authorization": "Bearer \(token)"]
                ).json ?? .null
            if let o = project["occurrences"]?.int64Value, o == project["processed"]?.int64Value { break }
            usleep(50_000)
        }
        XCTAssertEqual(project["occurrences"]?.int64Value, project["processed"]?.int64Value, project.jsonString)
        XCTAssertGreaterThanOrEqual(project["occurrences"]?.int64Value ?? 0, Int64(ackedIDs.count))
    }

    func testSIGTERMStopsGracefullyWithEverythingGrouped() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-sigterm")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let serve = try ServeProcess(dataDir: dir)
        let banner = try serve.banner()
        let port = try XCTUnwrap(serve.port(banner))
        let dsn = try DSN(parsing: String(try XCTUnwrap(banner.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        for i in 0..<40 {
            let r = RawHTTP.send(
                port: port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
                headers: ["X-Sentry-Auth": dsn.authHeader(client: "sigterm/1")],
                body: TestEvents.envelope(TestEvents.native(offsets: [UInt64(i % 4) + 1])))
            XCTAssertEqual(r.status, 200)
        }
        XCTAssertEqual(serve.process.end(with: SIGTERM), ProcessEnd(exitCode: 0, signal: nil), "a clean stop on SIGTERM")
        let store = try TestDatabase.openStore(dataDirectory: dir)
        defer { store.close() }
        let totals = try store.totals()
        XCTAssertEqual(totals.occurrences, 40)
        XCTAssertEqual(totals.processed, 40)
    }
}
