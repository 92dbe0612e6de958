// `faultline upload --wait` keeps asking through a server that is briefly unreachable or failing
// (a restart, a node leaving the balancer): the files are on the server already, so only the
// deadline ends the wait, and a 4xx still ends it at once. The peer is scripted, as a real
// server cannot be made to fail on cue: the Sentry chunk-upload protocol's answers, then 503s and
// a dropped connection for the status polls before the real answer.
import FaultlineProtocol
import Foundation
import Synchronization
import XCTest
import FaultlineTestSupport

final class UploadWaitRetryTests: XCTestCase {
    private var work = ""
    override func setUp() { work = TestSupport.makeTemporaryDirectory("faultline-upload-wait-retry") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: work) }

    /// A server that has every file already; its status polls answer `failures` in turn, then
    /// `installed` with the backfill done.
    private func server(buildID: BuildID, failures: [ScriptedHTTPServer.Reply]) throws -> ScriptedHTTPServer {
        let polls = Atomic<Int>(0)
        let portBox = Mutex<UInt16>(0)
        let server = try ScriptedHTTPServer { request in
            if request.path.contains("/chunk-upload/") {
                let port = portBox.withLock { $0 }
                let options = #"{"chunkSize":8388608,"chunksPerRequest":64,"maxRequestSize":33554432,"compression":["gzip"]"#
                return .status(200, body: options + #","url":"http://127.0.0.1:\#(port)/chunks/"}"#)
            }
            if request.path.contains("/difs/assemble/") {
                let body = (try? JSONValue.parse(request.body))?.objectValue ?? JSONObject()
                let states = body.keys.map { "\"\($0)\":{\"state\":\"ok\",\"missingChunks\":[]}" }.joined(separator: ",")
                return .status(200, body: "{\(states)}")
            }
            if request.path.hasPrefix("/api/0/debug-files/status/") {
                let n = polls.wrappingAdd(1, ordering: .relaxed).oldValue
                if n < failures.count { return failures[n] }
                return .status(200, body: #"{"files":[{"build_id":"\#(buildID.hex)","installed":true,"backfill":{"state":"done"}}]}"#)
            }
            return .status(404)
        }
        portBox.withLock { $0 = server.port }
        return server
    }

    private func upload(_ program: String, port: UInt16) throws -> TestSupport.Outcome {
        try TestSupport.run(
            TestSupport.product("faultline"), ["upload", "--wait", "--timeout", "60", "--json", program],
            environment: ["FAULTLINE_URL": "http://127.0.0.1:\(port)", "FAULTLINE_TOKEN": "flst_test"], timeout: 120)
    }

    func testTheWaitGoesOnThroughFailedPollsUntilTheServerAnswers() throws {
        let program = try Fixtures.buildProgram(in: work)
        let server = try server(
            buildID: program.buildID, failures: [.status(503, body: "{}"), .noAnswer, .status(502, body: "{}")])
        let r = try upload(program.path, port: server.port)
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertEqual(try XCTUnwrap(JSONValue.parse(Data(r.stdout.utf8))["wait"]?["state"]?.stringValue), "finished", r.stdout)
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("/api/0/debug-files/status/") }.count, 4)
    }

    /// A server that stops answering the status polls costs what is left of `--timeout`, not a
    /// request's own 300 s: the upload ends (exit 6) well inside the harness's minute.
    func testAServerThatStopsAnsweringCostsNoMoreThanTheTimeout() throws {
        let program = try Fixtures.buildProgram(in: work)
        let server = try server(buildID: program.buildID, failures: Array(repeating: .slow(seconds: 30, then: 200), count: 5))
        let r = try TestSupport.run(
            TestSupport.product("faultline"), ["upload", "--wait", "--timeout", "2", "--json", program.path],
            environment: ["FAULTLINE_URL": "http://127.0.0.1:\(server.port)", "FAULTLINE_TOKEN": "flst_test"], timeout: 60)
        XCTAssertNil(r.signal, "ended by itself, not by the harness: \(r)")
        XCTAssertEqual(r.exitCode, 6, r.description)
    }

    func testARefusalEndsTheWaitAtOnce() throws {
        let program = try Fixtures.buildProgram(in: work)
        let server = try server(buildID: program.buildID, failures: Array(repeating: .status(401, body: #"{"detail":"bad token"}"#), count: 50))
        let r = try upload(program.path, port: server.port)
        XCTAssertEqual(r.exitCode, 6, r.description)
        XCTAssertTrue(r.stderr.contains("HTTP 401: bad token"), r.description)
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("/api/0/debug-files/status/") }.count, 1)
    }
}
