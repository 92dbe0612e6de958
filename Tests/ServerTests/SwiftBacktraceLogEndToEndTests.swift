// A Swift runtime JSON crash log from a real crash of a stripped program, end to end: `faultline
// crashes` → the server (unsymbolicated: no debug file yet) → `faultline upload --wait` of the split
// debug file → the issue's stack has the program's functions and source lines.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class SwiftBacktraceLogEndToEndTests: XCTestCase {
    var server: TestServer!
    var work: String!
    let faultline = TestSupport.product("faultline")

    override func setUpWithError() throws {
        server = try TestServer()
        work = TestSupport.makeTemporaryDirectory("swift-log-e2e")
    }
    override func tearDown() {
        server?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    func testStrippedProgramsSwiftCrashLogIsSymbolicatedAfterUpload() throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: work + "/dist", withIntermediateDirectories: true)
        let built = try SwiftCrashLogs.build("fatal-error", in: work)
        let shipped = work + "/dist/fatal-error"
        try fm.copyItem(atPath: built, toPath: shipped)
        let split = try TestSupport.run(faultline, ["debug-files", "split", "--output", work + "/debug", work + "/dist"])
        XCTAssertEqual(split.exitCode, 0, split.description)
        XCTAssertFalse(try ELFInfoCheck.hasDebugInfo(shipped), "the shipped program is stripped")

        let crash = try SwiftCrashLogs.crash(shipped, logDirectory: work + "/logs")
        XCTAssertEqual(crash.outcome.signal, SIGILL, crash.outcome.description)
        let events = try TestSupport.run(faultline, ["crashes", work + "/logs"])
        XCTAssertEqual(events.exitCode, 0, events.description)
        let event = try JSONValue.parse(Data(try XCTUnwrap(events.stdout.split(separator: "\n").first).utf8))
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        try server.waitUntilIdle()
        let before = try server.getJSON("/api/0/projects/faultline/default/issues/")
        XCTAssertEqual(before.arrayValue?.count, 1, before.jsonString)
        let issueID = try XCTUnwrap(before[0]?["id"]?.stringValue)
        let unsymbolicated = try server.getJSON("/api/0/issues/\(issueID)/")
        XCTAssertFalse(unsymbolicated.jsonString.contains("fatal-error.swift"), "no source lines without the debug file")

        let r = try TestSupport.run(
            faultline, ["upload", "--wait", "--json", work + "/debug"],
            environment: ["FAULTLINE_URL": "http://127.0.0.1:\(server.port)", "FAULTLINE_TOKEN": server.token],
            timeout: 120)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let json = try JSONValue.parse(Data(r.stdout.utf8))
        XCTAssertEqual(json["wait"]?["occurrences_symbolicated"]?.int64Value, 1, r.stdout)

        let issue = try server.getJSON("/api/0/issues/\(issueID)/")
        let frames = issue["stack"]?.arrayValue ?? []
        XCTAssertTrue(frames.contains { ($0["function"]?.stringValue ?? "").contains("swiftLogFixtureCheck") }, issue.jsonString)
        XCTAssertTrue(
            frames.contains { ($0["filename"]?.stringValue ?? "").hasSuffix("fatal-error.swift") && $0["lineno"]?.int64Value == 5 },
            issue.jsonString)
        XCTAssertTrue(issue.jsonString.contains("Swift fatal error"), "the exception type names the failure: \(issue.jsonString)")
    }
}

enum ELFInfoCheck {
    static func hasDebugInfo(_ path: String) throws -> Bool {
        try TestSupport.shell("readelf -S -W '\(path)'").contains(".debug_info")
    }
}
