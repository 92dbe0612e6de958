// The SDK with a well-formed but wrong key against the real server: the server refuses every
// envelope, and the app hears it once on stderr (with the key's prefix), in the status, and
// from flush, instead of losing its events silently.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class WrongKeySDKTests: XCTestCase {
    func testAWrongKeyPrintsOneLineOnceAndFlushSaysNothingArrived() throws {
        let server = try TestServer()
        defer { server.stop() }
        let app = TestSupport.makeTemporaryDirectory("wrong-key-app")
        defer { try? FileManager.default.removeItem(atPath: app) }
        let wrong = "0badc0de0badc0de0badc0de0badc0de"
        XCTAssertNotEqual(server.publicKey, wrong)
        let dsn = server.dsn.replacingOccurrences(of: server.publicKey, with: wrong)
        let o = try TestSupport.run(
            TestSupport.product("faultline-crasher"), ["capture-and-flush", "--data-dir", app, "--dsn", dsn, "--count", "3"],
            environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        let said = o.stderr.components(separatedBy: "\n").filter { $0.contains("refused the DSN's key") }
        XCTAssertEqual(said.count, 1, o.stderr)
        XCTAssertTrue(said.first?.contains("0badc0de… (HTTP 40") == true, o.stderr)
        XCTAssertTrue(o.stdout.contains("flush false"), o.stdout)
        let status = try JSONValue.parse(Data(String(o.stdout.split(separator: "\n").last ?? "").utf8))
        XCTAssertTrue([401, 403].contains(status["rejected_key_status"]?.int64Value ?? 0), o.stdout)
        XCTAssertEqual(status["rejected_key_prefix"]?.stringValue, "0badc0de")
        XCTAssertEqual(try server.storedCount(), 0, "nothing was stored under a wrong key")
    }
}
