// The official Python sentry-sdk sending to our server: a message and an exception arrive,
// are stored and grouped.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ThirdPartyClientTests: XCTestCase {
    func testPythonSentrySDKSendsEventAndException() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        let probe = try TestSupport.run(python, ["-c", "import sentry_sdk"])
        guard probe.exitCode == 0 else { return XCTFail("sentry-sdk is not installed (tools/setup runs pip install sentry-sdk)") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
        import sys, sentry_sdk
        sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, release="py@1.0")
        print(sentry_sdk.capture_message("hello from python"))
        def divide(a, b):
            return a / b
        try:
            divide(1, 0)
        except ZeroDivisionError:
            print(sentry_sdk.capture_exception())
        sentry_sdk.flush(10)
        """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let ids = r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.count == 32 }
        XCTAssertEqual(ids.count, 2, r.stdout)
        try server.waitUntilIdle()
        for id in ids {
            let e = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
            XCTAssertEqual(e["event"]?["platform"]?.stringValue, "python")
            XCTAssertEqual(e["release"]?.stringValue, "py@1.0")
        }
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues.arrayValue?.count, 2)
        let titles = issues.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
        XCTAssertTrue(titles.contains { $0.contains("ZeroDivisionError") && $0.contains("divide") }, "\(titles)")
    }
}
