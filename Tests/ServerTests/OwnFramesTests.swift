// Faultline never names itself as the culprit: an uncaught C++ exception (through our terminate
// handler), an error logged through CrashReportingLogger and one captured inside Trace.withSpan
// are titled after the app's function, with the crasher's debug file on the server. Our frames
// stay in the API's stack only when asked for, marked, and dimmed on the page.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class OwnFramesTests: XCTestCase {
    func testTitlesNameTheAppsFunctionNeverFaultlinesWrappers() throws {
        let crasher = TestSupport.product("faultline-crasher")
        let server = try TestServer()
        defer { server.stop() }
        XCTAssertEqual(try server.uploadDebugFile(crasher), "ok")
        let app = TestSupport.makeTemporaryDirectory("own-frames-app")
        defer { try? FileManager.default.removeItem(atPath: app) }
        let env = ["SWIFT_BACKTRACE": "enable=no"]

        let crash = try TestSupport.run(crasher, ["cxx-throw", "--data-dir", app, "--dsn", server.dsn], environment: env)
        XCTAssertEqual(crash.signal, SIGABRT, crash.description)
        let report = try XCTUnwrap(TestSupport.files(in: app + "/crashes", suffix: ".crash.json").first)
        let json = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: report)))
        XCTAssertEqual(
            json["frames"]?.arrayValue?.filter { $0["faultline"]?.boolValue == true }.count, 1,
            "the crash core marks the terminate handler's frame by address")
        for mode in ["logger-error", "span-error"] {
            let o = try TestSupport.run(crasher, [mode, "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
            XCTAssertEqual(o.exitCode, 0, o.description)
        }
        let flush = try TestSupport.run(crasher, ["flush", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
        XCTAssertEqual(flush.exitCode, 0, flush.description)
        try server.waitUntilIdle()

        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        let titles = issues.compactMap { $0["title"]?.stringValue }
        for (what, function) in [("std::out_of_range", "probe_throw_cxx"), ("LoggedError", "reconcileLedger"), ("CrasherError", "settleInvoice")] {
            let title = try XCTUnwrap(titles.first { $0.contains(what) }, "\(what) among \(titles)")
            XCTAssertTrue(title.contains(function), "\(what) is titled after the app's \(function): \(title)")
            for own in ["record_and_terminate", "Faultline.capture", "CrashReportingLogger", "withSpan"] {
                XCTAssertFalse(title.contains(own), "\(what): \(title)")
            }
        }

        // The API leaves our frames out by default; the page shows them dimmed, never as the app's.
        let cxx = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.contains("std::out_of_range") == true })
        let id = try XCTUnwrap(cxx["id"]?.stringValue)
        let stack = try server.getJSON("/api/0/issues/\(id)/")["stack"]?.arrayValue ?? []
        XCTAssertFalse(stack.contains { $0["function"]?.stringValue?.contains("record_and_terminate") == true }, "\(stack)")
        XCTAssertTrue(stack.contains { $0["function"]?.stringValue?.contains("probe_throw_cxx") == true }, "\(stack)")
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(id)", login)
        if page.status == 200 {
            let html = page.text
            let own = try XCTUnwrap(html.range(of: "record_and_terminate"), "the page shows the terminate handler's frame")
            let frameStart = try XCTUnwrap(html.range(of: "<div class=\"frame ", options: .backwards, range: html.startIndex..<own.lowerBound))
            XCTAssertTrue(html[frameStart.lowerBound..<own.lowerBound].contains("frame system own"), String(html[frameStart.lowerBound..<own.upperBound]))
        } else {
            XCTFail("issue page: \(page.status) \(page.text.prefix(300))")
        }
    }
}
