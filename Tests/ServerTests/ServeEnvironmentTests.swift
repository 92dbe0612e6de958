// A malformed environment value for `faultline serve` is a usage error naming the variable, as the
// same value given to its flag is; it is never skipped in favour of the default.
import Foundation
import XCTest
import FaultlineTestSupport

final class ServeEnvironmentTests: XCTestCase {
    func testAMalformedValueInTheEnvironmentExitsTwoNamingTheVariable() throws {
        let work = TestSupport.makeTemporaryDirectory("faultline-serve-env")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let malformed = [
            ("FAULTLINE_RETENTION_DAYS", "90d"), ("FAULTLINE_RETENTION_MAX_BYTES", "200GB"), ("FAULTLINE_PORT", "8o80"),
            ("FAULTLINE_SMTP_URL", "mail.example.com")
        ]
        for (name, value) in malformed {
            let r = try TestSupport.run(
                TestSupport.product("faultline"), ["serve", "--data-dir", work + "/data", "--port", "0"], environment: [name: value], timeout: 60)
            XCTAssertEqual(r.exitCode, 2, "\(name)=\(value): \(r.description)")
            XCTAssertTrue(r.stderr.contains(name) && r.stderr.contains(value), "\(name)=\(value): \(r.description)")
            XCTAssertFalse(r.stdout.contains("listening"), "\(name)=\(value): \(r.description)")
        }
    }
}
