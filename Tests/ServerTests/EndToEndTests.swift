// The whole story with our own pieces: the sample crasher crashes, the next launch's SDK sends the
// crash from its outbox to our server, the event is grouped without symbols; the crasher's debug
// file is uploaded and backfill shows the issue symbolicated.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineSymbolication

final class EndToEndTests: XCTestCase {
    func testCrasherThroughSDKOutboxThenLateDebugFile() throws {
        let crasher = TestSupport.product("faultline-crasher")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: crasher), "faultline-crasher is a dependency of this test target and must be built")
        let server = try TestServer()
        defer { server.stop() }
        let app = TestSupport.makeTemporaryDirectory("faultline-e2e-app")
        defer { try? FileManager.default.removeItem(atPath: app) }
        let env = ["SWIFT_BACKTRACE": "enable=no"]

        let crash = try TestSupport.run(crasher, ["segv", "--data-dir", app, "--dsn", server.dsn], environment: env)
        XCTAssertEqual(crash.signal, SIGSEGV, crash.description)
        let flush = try TestSupport.run(crasher, ["flush", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
        XCTAssertEqual(flush.exitCode, 0, flush.description)
        XCTAssertTrue(flush.stdout.contains("flushed"), flush.description)
        try server.waitUntilIdle()

        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        let crashIssue = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.hasPrefix("SIGSEGV") == true }, "\(issues)")
        XCTAssertEqual(crashIssue["releases"], ["crasher@1.0"])
        let crasherBuildID = try ELFSummary.read(path: crasher).buildID
        let before = try server.getJSON("/api/0/issues/\(crashIssue["id"]!.stringValue!)/")
        let frames = before["stack"]?.arrayValue ?? []
        XCTAssertTrue(frames.contains { $0["build_id"]?.stringValue == crasherBuildID.hex }, "the stack goes through the crasher: \(frames)")

        XCTAssertEqual(try server.uploadDebugFile(crasher), "ok")
        try server.waitUntilIdle()
        let after = try server.getJSON("/api/0/issues/\(crashIssue["id"]!.stringValue!)/")
        XCTAssertEqual(after["symbolicated"]?.boolValue, true, after.jsonString)
        let names = (after["stack"]?.arrayValue ?? []).compactMap { $0["function"]?.stringValue }
        XCTAssertTrue(names.contains { $0.contains("probe_segv") }, "symbolicated stack: \(names)")
    }
}
