// Preloaded into programs whose runtimes handle signals themselves: a runtime that takes every
// signal (Go's) must not silence the other threads' stacks, and a debugger must not stop every
// program at start on Faultline's own check of its thread-dump signal.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class RuntimeCoexistenceTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("runtime-coexistence") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testEveryThreadAnswersWhenTheAppTookTheDumpSignal() throws {
        let lib = try PreloadLibrary.path()
        let program = dir + "/takes_every_signal"
        _ = try TestSupport.shell("cc -g -O1 -pthread '\(TestSupport.repositoryRoot().path)/Fixtures/CrashPrograms/takes_every_signal.c' -o '\(program)'")
        let o = try TestSupport.run(program, [], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1)
        let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(reports.first))))
        XCTAssertEqual(r.otherThreads.count, 3, "\(r.otherThreads)")
        for t in r.otherThreads {
            XCTAssertNil(t.error, "thread \(t.id) answered: \(t.error ?? "")")
            XCTAssertFalse(t.frames.isEmpty, "thread \(t.id) has its stack")
        }
    }

    func testADebuggerRunsAPreloadedProgramWithoutStoppingAtStart() throws {
        let lib = try PreloadLibrary.path()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return XCTFail("gdb is not installed (.ci/run installs it)") }
        let o = try TestSupport.run(
            "/usr/bin/gdb",
            [
                "-nx", "-batch", "-ex", "set environment LD_PRELOAD=\(lib)", "-ex", "set environment FAULTLINE_CRASH_DIR=\(crashDir)", "-ex", "run",
                "--args", "/bin/echo", "reached main"
            ], timeout: 120)
        XCTAssertTrue(o.stdout.contains("reached main"), "the program ran to its end under gdb: \(o)")
        XCTAssertTrue(o.stdout.contains("exited normally"), o.description)
        XCTAssertFalse((o.stdout + o.stderr).contains("received signal"), o.description)
    }
}
