// Round trip with the crash handler: crash the crasher, symbolicate the report it left.
import Foundation
import XCTest

final class RoundTripTests: XCTestCase {
    func testCrasherReportNamesTheCrashingFunctionAndLine() throws {
        let dir = URL(fileURLWithPath: Fixtures.faultlineBinary).deletingLastPathComponent().path
        let crasher = dir + "/faultline-crasher"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: crasher), "faultline-crasher is a dependency of this test target and must be built")
        let data = Fixtures.temporaryDirectory("roundtrip")
        defer { try? FileManager.default.removeItem(atPath: data) }
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        let crash = Fixtures.run(crasher, ["swift-index", "--data-dir", data], environment: env)
        // Foundation reports death by a signal as the signal number (SIGILL = 4).
        XCTAssertEqual(crash.status, SIGILL, "expected SIGILL from the Swift bounds check: \(crash.stderr)")
        let reports = (try FileManager.default.contentsOfDirectory(atPath: data + "/crashes")).filter { $0.hasSuffix(".crash.json") }
        let report = try XCTUnwrap(reports.first, "no crash report written")

        let r = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", data + "/crashes/" + report])
        XCTAssertTrue([0, 4].contains(r.status), r.stderr)
        // The crasher's own frame: indexOutOfRange, on the subscript line of SwiftFaults.swift.
        let source = Fixtures.repoRoot + "/Tests/CrashProbes/faultline-crasher/SwiftFaults.swift"
        let lines = try String(contentsOfFile: source, encoding: .utf8).components(separatedBy: "\n")
        let decl = try XCTUnwrap(lines.firstIndex { $0.contains("func indexOutOfRange()") }) + 1
        let subscriptLine = try XCTUnwrap(lines[decl...].firstIndex { $0.contains("array[") }) + 1
        let frame = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.contains("indexOutOfRange") }, r.stdout)
        XCTAssertTrue(frame.contains("SwiftFaults.swift:\(subscriptLine):"), String(frame))
        XCTAssertTrue(frame.contains("(faultline-crasher +0x"), String(frame))
    }
}
