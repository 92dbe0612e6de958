// One `faultline serve` per SQLite data directory: a second one on the same directory is refused
// at once and names the first; the first goes on serving; once it is gone (kill -9 included) the
// directory can be served again. PostgreSQL nodes share their database by design: no lock there.
import Foundation
import XCTest
import FaultlineTestSupport

final class ServeDataDirectoryLockTests: XCTestCase {
    func testASecondServeOnTheSameSQLiteDirectoryIsRefusedAndTheFirstGoesOn() throws {
        try XCTSkipIf(TestDatabase.isPostgres, "PostgreSQL nodes share their database: no data-directory lock")
        let dir = TestSupport.makeTemporaryDirectory("faultline-serve-lock")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try CrashSafetyTests.ServeProcess(dataDir: dir)
        let port = try first.endpoints().port

        let second = try TestSupport.run(TestSupport.product("faultline"), ["serve", "--data-dir", dir, "--port", "0"], timeout: 60)
        XCTAssertEqual(second.exitCode, 1, second.description)
        XCTAssertNil(second.signal, second.description)
        XCTAssertTrue(
            second.stderr.contains("another faultline serve uses \(dir) (process \(first.process.processIdentifier))"), second.description)
        XCTAssertFalse(second.stdout.contains("listening on"), second.description)

        XCTAssertTrue(first.process.isRunning)
        let health = RawHTTP.send(port: port, method: "GET", path: "/health")
        XCTAssertEqual(health.status, 200, health.text)

        kill(first.process.processIdentifier, SIGKILL)
        XCTAssertEqual(first.process.awaitEnd().signal, SIGKILL)
        let third = try CrashSafetyTests.ServeProcess(dataDir: dir)
        defer { _ = third.process.end() }
        let banner = try third.banner()
        XCTAssertNotNil(third.port(banner), "a lock left by a killed server does not block the next start: \(banner)")
    }
}
