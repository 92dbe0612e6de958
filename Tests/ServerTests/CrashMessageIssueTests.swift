// A crash that says why (here an uncaught C++ exception) is titled by what it said, and one crash
// site whose message embeds a varying value stays one issue.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class CrashMessageIssueTests: XCTestCase {
    func testIssueTitleShowsTheMessageAndVaryingMessagesShareOneIssue() throws {
        let dir = TestSupport.makeTemporaryDirectory("crash-message")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let o = try TestSupport.run(
            TestSupport.product("faultline-crasher"), ["cxx-throw", "--data-dir", dir],
            environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        let path = try XCTUnwrap(TestSupport.files(in: dir + "/crashes", suffix: ".crash.json").first, "the crash left a report")
        let report = try CrashReport.parse(Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(report.message?.type, "std::out_of_range")

        let server = try TestServer()
        defer { server.stop() }
        for what in ["cache miss: zz", "cache miss: 17", "cache miss: 2026-12-01T06:00:00Z"] {
            var r = report
            r.eventID = TestEvents.eventID()
            r.message?.text = what
            let response = server.sendEnvelope(TestEvents.envelope(CrashEvent.make(from: r)))
            XCTAssertEqual(response.status, 200, response.text)
        }
        try server.waitUntilIdle()
        let issues = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue)
        XCTAssertEqual(issues.count, 1, "one crash site, one issue, whatever the messages said: \(issues)")
        let title = try XCTUnwrap(issues.first?["title"]?.stringValue)
        XCTAssertTrue(title.hasPrefix("std::out_of_range: cache miss: zz in "), title)
        XCTAssertEqual(issues.first?["count"]?.int64Value, 3)
    }
}
