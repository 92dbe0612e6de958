// `faultline console` like `tail -F`: a file that does not exist yet is waited for, and a file
// deleted and created anew is shown from its start without a false "trimmed away" note.
@testable import Faultline
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

final class ConsoleWaitAndRecreateTests: XCTestCase {
    /// Collects what a pipe delivers, for polling with a deadline.
    final class Collected: Sendable {
        private let bytes = Mutex(Data())
        init(_ pipe: Pipe) {
            pipe.fileHandleForReading.readabilityHandler = { [self] h in
                let d = h.availableData
                bytes.withLock { $0.append(d) }
            }
        }
        var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
        func waitFor(_ needle: String, seconds: Double = 20) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !text.contains(needle) && Date() < deadline { usleep(20_000) }
            return text.contains(needle)
        }
    }

    func testWaitsForAMissingFileAndFollowsItAcrossARecreationWithoutAGapNote() throws {
        let dir = TestSupport.makeTemporaryDirectory("console-wait")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/later.log"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.product("faultline"))
        p.arguments = ["console", path, "--color", "never"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let shown = Collected(out), said = Collected(err)
        try p.run()
        XCTAssertTrue(said.waitFor("does not exist yet; waiting for it"), said.text)
        XCTAssertTrue(p.isRunning, "still waiting, like tail -F")

        var log = try FileLogger(path: path)
        for i in 0..<5 { log.error("first file \(i)") }
        XCTAssertTrue(shown.waitFor("first file 4"), shown.text)
        log.close()

        // Deleted and written anew (not a trim: the writer counted no trim).
        unlink(path)
        log = try FileLogger(path: path)
        for i in 0..<5 { log.error("second file \(i)") }
        XCTAssertTrue(shown.waitFor("second file 4"), shown.text)
        log.close()

        kill(p.processIdentifier, SIGTERM)
        XCTAssertEqual(p.awaitEnd(), ProcessEnd(exitCode: 0, signal: nil))
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
        let lines = shown.text.split(separator: "\n").compactMap { l -> String? in
            guard let r = l.range(of: #"(first|second) file \d"#, options: .regularExpression) else { return nil }
            return String(l[r])
        }
        XCTAssertEqual(lines, (0..<5).map { "first file \($0)" } + (0..<5).map { "second file \($0)" }, shown.text)
        XCTAssertFalse(shown.text.contains("trimmed away"), "a recreated file is not a trim: \(shown.text)")
    }

    func testAMissingFileWithoutFollowIsAnError() throws {
        let dir = TestSupport.makeTemporaryDirectory("console-wait")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let o = try TestSupport.run(TestSupport.product("faultline"), ["console", dir + "/none.log", "--no-follow"])
        XCTAssertEqual(o.exitCode, 3, o.description)
        XCTAssertTrue(o.stderr.contains("No such file or directory"), o.stderr)
    }
}
