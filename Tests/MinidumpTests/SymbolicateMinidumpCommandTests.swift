// `faultline symbolicate DUMP`: a dump written by Crashpad's own handler for a program built
// here, walked and symbolicated by the CLI as a report is printed; a broken dump is an input error.
import FaultlineMinidump
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class SymbolicateMinidumpCommandTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("symbolicate-minidump") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testTheCommandWalksEveryThreadAndNamesTheProgramsFunctions() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let dumpPath = dir + "/crash.dmp"
        try Data(try CrashpadDumps.crash(binary, in: dir)).write(to: URL(fileURLWithPath: dumpPath))
        let faultline = TestSupport.product("faultline")

        let text = try TestSupport.run(faultline, ["symbolicate", "--no-debuginfod", dumpPath], timeout: 120)
        XCTAssertEqual(text.exitCode, 0, text.description)
        let crashing = text.stdout.components(separatedBy: "\n\n").first ?? ""
        for function in ["crash_here", "caller", "main"] { XCTAssertTrue(crashing.contains(function), "\(function) in:\n\(text.stdout)") }
        XCTAssertTrue(text.stdout.contains("SIGSEGV"), text.stdout)
        XCTAssertTrue(text.stdout.contains("wait_in_worker"), "the other threads are printed too:\n\(text.stdout)")
        // Each frame says how the walk found it, as the help promises.
        let first = crashing.split(separator: "\n").first { $0.hasPrefix("#0 ") } ?? ""
        XCTAssertTrue(first.hasSuffix(" [context]"), "the crashing frame comes from the context: \(first)")
        XCTAssertTrue(crashing.contains(" [cfi]") || crashing.contains(" [fp]") || crashing.contains(" [scan]"), crashing)

        // --json: the event, its frames filled in and marked with how they were found.
        let json = try TestSupport.run(faultline, ["symbolicate", "--no-debuginfod", "--json", dumpPath], timeout: 120)
        XCTAssertEqual(json.exitCode, 0, json.description)
        let event = try JSONValue.parse(Data(json.stdout.utf8))
        let frames = (event["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue ?? []).reversed()
        XCTAssertEqual(frames.first?["function"]?.stringValue, "crash_here")
        XCTAssertEqual(frames.first?["trust"]?.stringValue, "context")
        XCTAssertTrue(frames.dropFirst().contains { $0["trust"]?.stringValue == "cfi" }, "\(frames)")
        XCTAssertEqual(event["threads"]?["values"]?.arrayValue?.count, 3)
        // The same dump, the same event id.
        let again = try TestSupport.run(faultline, ["symbolicate", "--no-debuginfod", "--json", dumpPath], timeout: 120)
        XCTAssertEqual(try JSONValue.parse(Data(again.stdout.utf8))["event_id"], event["event_id"])
    }

    func testACutDumpIsAnInputError() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let whole = try CrashpadDumps.crash(binary, in: dir)
        let cut = dir + "/cut.dmp"
        try Data(whole.prefix(40)).write(to: URL(fileURLWithPath: cut))
        let run = try TestSupport.run(TestSupport.product("faultline"), ["symbolicate", "--no-debuginfod", cut], timeout: 60)
        XCTAssertEqual(run.exitCode, 3, run.description)
        XCTAssertTrue(run.stderr.contains("cut.dmp"), run.description)
        XCTAssertNil(run.signal, run.description)
    }
}
