// Every thread a crash captured is on the issue page, not only the crashing one: each other thread
// under its name and state, its stack symbolicated like the crashing stack.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ThreadsPageTests: XCTestCase {
    func testTheIssuePageShowsEveryThreadsStack() throws {
        let crasher = TestSupport.product("faultline-crasher")
        let server = try TestServer()
        defer { server.stop() }
        XCTAssertEqual(try server.uploadDebugFile(crasher), "ok")
        let app = TestSupport.makeTemporaryDirectory("threads-page")
        defer { try? FileManager.default.removeItem(atPath: app) }
        let env = ["SWIFT_BACKTRACE": "enable=no"]
        let crash = try TestSupport.run(
            crasher, ["parked-threads-segv", "--threads", "3", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 60)
        XCTAssertEqual(crash.signal, SIGSEGV, crash.description)
        let flush = try TestSupport.run(crasher, ["flush", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
        XCTAssertEqual(flush.exitCode, 0, flush.description)
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(
            try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue?.first { $0["title"]?.stringValue?.hasPrefix("SIGSEGV") == true })
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(try XCTUnwrap(issue["id"]?.stringValue))", login).text
        let threads = try XCTUnwrap(page.range(of: "<h2>Threads ("), "a Threads section")
        let section = String(page[threads.lowerBound...].prefix(200_000))
        XCTAssertTrue(section.contains("park-sleep") && section.contains("(sleeping)"), section.prefix(3000).description)
        XCTAssertTrue(section.contains("probe_park_sleep"), "the parked thread's frames are symbolicated: \(section.prefix(3000))")
        XCTAssertEqual(section.components(separatedBy: "<details class=\"thread\">").count - 1 >= 3, true, "at least the three parked threads")
    }
}
