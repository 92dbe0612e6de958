// `faultline serve` that cannot listen exits 1 and says why, with no signal: the workers it had
// started are stopped before the server is dropped. A first start that fails still shows the
// server token it created, as it is stored only hashed.
import Foundation
import XCTest
import FaultlineTestSupport

final class ServeListenFailureTests: XCTestCase {
    private var work = ""
    override func setUp() { work = TestSupport.makeTemporaryDirectory("faultline-listen-failure") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: work) }

    private func serve(_ dataDir: String, _ arguments: [String]) throws -> TestSupport.Outcome {
        try TestSupport.run(
            TestSupport.product("faultline"), ["serve", "--data-dir", dataDir] + arguments + (try TestDatabase.serveArguments(dataDirectory: dataDir)),
            timeout: 60)
    }

    func testABusyPortEndsTheFirstStartWithExitOneAndTheTokenShown() throws {
        let holder = try StalledServer()
        defer { holder.close() }
        // The abort this guards against depended on thread timing: several fresh starts.
        for attempt in 0..<5 {
            let r = try serve(work + "/fresh-\(attempt)", ["--port", String(holder.port)])
            XCTAssertNil(r.signal, "attempt \(attempt): \(r.description)")
            XCTAssertEqual(r.exitCode, 1, "attempt \(attempt): \(r.description)")
            XCTAssertTrue(r.stderr.contains("serve: "), "attempt \(attempt) does not say why: \(r.description)")
            XCTAssertTrue(r.stdout.contains("server token (shown once; for uploads and reading): flst_"), "attempt \(attempt): \(r.description)")
            XCTAssertTrue(r.stdout.contains("public key: "), "attempt \(attempt): \(r.description)")
        }
    }

    func testAnAddressThatCannotBeListenedOnEndsWithExitOne() throws {
        let dir = work + "/bad-host"
        for attempt in 0..<5 {
            let r = try serve(dir, ["--port", "0", "--host", "999.1.1.1"])
            XCTAssertNil(r.signal, "attempt \(attempt): \(r.description)")
            XCTAssertEqual(r.exitCode, 1, "attempt \(attempt): \(r.description)")
            XCTAssertTrue(r.stderr.contains("serve: "), "attempt \(attempt) does not say why: \(r.description)")
        }
    }
}
