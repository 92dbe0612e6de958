// A crash in the first milliseconds after the handler is installed keeps its whole stack: the
// same frames as the same crash 100 ms later, walked by libunwind, under a CPU load that keeps
// start's background preparation from being scheduled. Unmodified C, C++ and Swift programs run
// under the preload library (Fixtures/CrashPrograms), and the SDK's own crasher.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class StartupCrashTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }
    let runsPerCase = 50

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("startup") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// The report in `crashDir` (exactly one), removed once read.
    func takeReport(file: StaticString = #filePath, line: UInt = #line) throws -> (CrashReport, JSONValue, String) {
        let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1, "exactly one report", file: file, line: line)
        let path = try XCTUnwrap(reports.first, file: file, line: line)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return (try CrashReport.parse(data), try JSONValue.parse(data), path)
    }

    /// Each frame as module name + offset: equal across runs of one binary whatever ASLR did.
    static func stack(_ r: CrashReport) -> [String] {
        r.frames.map { f in
            guard let m = r.module(containing: f.address) else { return "?+" + f.address.hex }
            return PathName.last(m.path) + "+0x" + String(f.address.value - m.base.value, radix: 16)
        }
    }

    func testUnmodifiedProgramsCrashingInTheirFirstMillisecondsKeepTheWholeStackUnderLoad() throws {
        let root = TestSupport.repositoryRoot().path
        let programs = root + "/Fixtures/CrashPrograms"
        let lib = try PreloadLibrary.path()
        _ = try TestSupport.shell(
            "cc -g -O1 '\(programs)/startup.c' -o '\(dir)/startup-c' && c++ -g -O1 '\(programs)/startup.cpp' -o '\(dir)/startup-cxx'"
                + " && swiftc -g '\(programs)/startup.swift' -o '\(dir)/startup-swift'")
        // (program, mode, signal, functions the symbolicated stack must name)
        let cases: [(String, String, Int32, [String])] = [
            ("startup-c", "abort", SIGABRT, ["abort", "parse_arguments", "main"]),
            ("startup-c", "assert", SIGABRT, ["abort", "__assert_fail", "parse_arguments", "main"]),
            ("startup-c", "null", SIGSEGV, ["parse_arguments", "main"]),
            ("startup-cxx", "throw", SIGABRT, ["abort", "std::terminate()", "__cxa_throw", "load_settings", "main"]),
            ("startup-cxx", "null", SIGSEGV, ["load_settings", "main"]),
            ("startup-swift", "trap", SIGILL, ["readConfiguration", "main"])
        ]
        let env = ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir]
        let load = try CPULoad(workers: 2)
        defer { load.stop() }
        var beforePreparation = 0
        for (program, mode, signal, functions) in cases {
            let label = "\(program) \(mode)"
            // The reference: the same crash from the same call site, 100 ms after start.
            let late = try TestSupport.run(dir + "/" + program, [mode, "late"], environment: env)
            XCTAssertEqual(late.signal, signal, "\(label) late: \(late)")
            let (reference, referenceJSON, referencePath) = try takeReport()
            XCTAssertEqual(referenceJSON["unwind"]?["method"]?.stringValue, "libunwind", label)
            let text = try TestSupport.run(TestSupport.product("faultline"), ["symbolicate", referencePath])
            for name in functions {
                XCTAssertTrue(text.stdout.contains(" in \(name)") || text.stdout.contains(".\(name)("), "\(label): \(name) in\n\(text.stdout)")
            }
            try FileManager.default.removeItem(atPath: referencePath)
            let expected = Self.stack(reference)
            for run in 0..<runsPerCase {
                let early = try TestSupport.run(dir + "/" + program, [mode], environment: env)
                XCTAssertEqual(early.signal, signal, "\(label) run \(run): \(early)")
                let (r, json, path) = try takeReport()
                XCTAssertEqual(json["unwind"]?["method"]?.stringValue, "libunwind", "\(label) run \(run): \(json["unwind"] ?? .null)")
                XCTAssertEqual(Self.stack(r), expected, "\(label) run \(run): the same frames as 100 ms later")
                if json["unwind"]?["prewarmed_by_crash"]?.boolValue == true { beforePreparation += 1 }
                try FileManager.default.removeItem(atPath: path)
            }
        }
        // How often the crash beat start's background preparation (the case this test is about):
        // printed, not asserted, as it depends on the scheduler.
        print("crashes that came before start's preparation began: \(beforePreparation) of \(cases.count * runsPerCase)")
    }

    func testTheSDKsCrashBeforeItsPreparationHasTheFramesOfTheSameCrashLater() throws {
        let crasher = TestSupport.product("faultline-crasher")
        let env = ["SWIFT_BACKTRACE": "enable=no"]
        let late = try TestSupport.run(crasher, ["segv-after-preparation", "--data-dir", dir], environment: env)
        XCTAssertEqual(late.signal, SIGSEGV, late.description)
        let (reference, _, referencePath) = try takeReport()
        try FileManager.default.removeItem(atPath: referencePath)
        // Start's preparation held back 3 s: the crashing thread pre-warms libunwind itself.
        let early = try TestSupport.run(crasher, ["segv-before-preparation", "--data-dir", dir], environment: env)
        XCTAssertEqual(early.signal, SIGSEGV, early.description)
        let (r, json, _) = try takeReport()
        XCTAssertEqual(json["unwind"]?["method"]?.stringValue, "libunwind")
        XCTAssertEqual(json["unwind"]?["prewarmed_by_crash"]?.boolValue, true)
        XCTAssertNil(json["unwind"]?["fallback"])
        XCTAssertEqual(Self.stack(r), Self.stack(reference))
        XCTAssertGreaterThanOrEqual(r.frames.count, 4, "the walk goes through main into libc's start")
    }

    /// A crash while start's thread is pre-warming waits for it, by the clock: the app's signals,
    /// which are open in the handler once it has moved off an app's own alternate stack, cut each
    /// of its naps short and once used up the whole wait in milliseconds (a frame-pointer walk
    /// where libunwind's was due).
    func testACrashWhilePreWarmingWaitsForItWithTheAppsSignalsArriving() throws {
        let crasher = TestSupport.product("faultline-crasher")
        let o = try TestSupport.run(crasher, ["segv-during-unwinder-preparation", "--data-dir", dir], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let (r, json, _) = try takeReport()
        XCTAssertEqual(json["unwind"]?["method"]?.stringValue, "libunwind", "\(json["unwind"] ?? .null)")
        XCTAssertNil(json["unwind"]?["fallback"])
        XCTAssertNotEqual(json["unwind"]?["prewarmed_by_crash"]?.boolValue, true, "start's thread did the pre-warm")
        XCTAssertGreaterThanOrEqual(r.frames.count, 4, "the walk goes through main into libc's start")
    }

    func testACrashInsideThePreparationItselfSaysWhyItWalkedFramePointers() throws {
        let crasher = TestSupport.product("faultline-crasher")
        let o = try TestSupport.run(crasher, ["segv-during-preparation", "--data-dir", dir], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let (r, json, _) = try takeReport()
        XCTAssertEqual(json["unwind"]?["method"]?.stringValue, "frame-pointers")
        XCTAssertEqual(json["unwind"]?["fallback"]?.stringValue, "crashed while preparing the unwinder")
        XCTAssertNotEqual(r.threadID, r.pid, "the preparing thread crashed, not the main thread")
        // The event says it too.
        let event = CrashEvent.make(from: r)
        XCTAssertEqual(event["extra"]?["unwind_fallback"]?.stringValue, "crashed while preparing the unwinder")
    }
}
