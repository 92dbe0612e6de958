// Real aarch64 crashes under emulation: unmodified aarch64 C and C++ programs, built here with the
// cross compilers (Tests/CrashProbes/aarch64), run under qemu-aarch64 with the aarch64 preload
// library (tools/build-preload --arch aarch64); each dies of its own signal and leaves a report
// with aarch64 registers and frames in the right modules. docs/AARCH64.md.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class Aarch64CrashTests: XCTestCase {
    var dataDir = ""
    var crashDir: String { dataDir + "/crashes" }
    var programs: String { dataDir + "/programs" }

    override func setUpWithError() throws {
        dataDir = TestSupport.makeTemporaryDirectory("aarch64")
        try Aarch64Emulation.requireTools()
        try FileManager.default.createDirectory(atPath: programs, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dataDir) }

    func buildCrasher() throws -> String { try Aarch64Emulation.buildCrasher(in: programs) }

    func runUnderEmulation(_ program: String, _ arguments: [String]) throws -> TestSupport.Outcome {
        try Aarch64Emulation.run(program, arguments, crashDirectory: crashDir, environment: ["FAULTLINE_RELEASE": "aarch64-probe@1"])
    }

    func onlyReport(file: StaticString = #filePath, line: UInt = #line) throws -> CrashReport {
        let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1, "expected exactly one report in \(crashDir)", file: file, line: line)
        return try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(reports.first, file: file, line: line))))
    }

    /// Whether some frame's call site (pc, or return address − 4) lies in `function` of the module at `path`.
    func hasFrame(_ r: CrashReport, in function: String, of path: String) throws -> Bool {
        let module = try XCTUnwrap(r.modules.first { $0.path == path }, "module \(path) in \(r.modules.map(\.path))")
        let range = try Aarch64Emulation.symbolRange(function, in: path)
        return r.frames.contains { frame in
            let callSite = frame.lookupAddress(on: r.architecture)
            return module.contains(callSite) && range.contains(callSite.value - module.base.value)
        }
    }

    func assertAarch64Report(_ r: CrashReport, signal: Int32, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.architecture, .aarch64, file: file, line: line)
        XCTAssertEqual(r.signal.number, Int(signal), file: file, line: line)
        XCTAssertEqual(r.registers.map(\.name), CPUArchitecture.aarch64.registerNames, file: file, line: line)
        let pc = r.registers.first { $0.name == "pc" }?.value
        XCTAssertEqual(pc, r.frames.first?.address, "frame 0 is the interrupted pc", file: file, line: line)
        if case .programCounter = r.frames.first {} else { XCTFail("frame 0 must be the exact pc", file: file, line: line) }
        let libc = r.modules.first { $0.path.hasSuffix("aarch64-linux-gnu/libc.so.6") }
        XCTAssertNotNil(libc?.buildID, "the arm64 libc with its build-id: \(r.modules.map(\.path))", file: file, line: line)
        XCTAssertEqual(r.context["release"]?.stringValue, "aarch64-probe@1", file: file, line: line)
    }

    func crash(_ mode: String) throws -> (TestSupport.Outcome, CrashReport, String) {
        let crasher = try buildCrasher()
        let o = try runUnderEmulation(crasher, [mode])
        return (o, try onlyReport(), crasher)
    }

    // MARK: Crashes

    func testNullDereferenceIsReportedWithAarch64RegistersAndTheFaultingFunction() throws {
        let (o, r, crasher) = try crash("null")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        assertAarch64Report(r, signal: SIGSEGV)
        XCTAssertEqual(r.signal.faultAddress, Address(16))
        XCTAssertFalse(r.stackOverflow)
        XCTAssertTrue(try hasFrame(r, in: "null_write", of: crasher), "frame 0 in null_write")
        XCTAssertTrue(try hasFrame(r, in: "main", of: crasher), "a return address in main")
        XCTAssertEqual(r.unwindStoppedBy, "end")

        // The event names the architecture as Sentry spells it, for every image and the device.
        let event = CrashEvent.make(from: r)
        XCTAssertEqual(event["contexts"]?["device"]?["arch"]?.stringValue, "arm64")
        let images = event["debug_meta"]?["images"]?.arrayValue ?? []
        XCTAssertFalse(images.isEmpty)
        XCTAssertTrue(images.allSatisfy { $0["arch"]?.stringValue == "arm64" }, "\(images)")
    }

    func testAbortIsReportedWithItsOwnSignal() throws {
        let (o, r, crasher) = try crash("abort")
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        assertAarch64Report(r, signal: SIGABRT)
        XCTAssertTrue(try hasFrame(r, in: "main", of: crasher), "abort's caller is on the stack")
    }

    func testStackOverflowOnTheMainThreadIsReported() throws {
        let (o, r, crasher) = try crash("overflow-main")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        assertAarch64Report(r, signal: SIGSEGV)
        XCTAssertTrue(r.stackOverflow, "the guard page was hit")
        XCTAssertTrue(try hasFrame(r, in: "recurse", of: crasher))
        XCTAssertNotNil(r.omitted, "a deep recursion keeps its innermost and outermost frames")
    }

    func testStackOverflowOnAThreadIsReported() throws {
        let (o, r, crasher) = try crash("overflow-thread")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        assertAarch64Report(r, signal: SIGSEGV)
        XCTAssertTrue(r.stackOverflow, "the thread's guard page was hit")
        XCTAssertTrue(try hasFrame(r, in: "recurse", of: crasher))
        XCTAssertTrue(try hasFrame(r, in: "overflow_thread", of: crasher), "the thread's start is among the outermost frames")
    }

    func testCrashInsideASharedLibraryLandsInThatLibrary() throws {
        let (o, r, crasher) = try crash("library")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        assertAarch64Report(r, signal: SIGSEGV)
        let library = programs + "/libcrashlib.so"
        let module = try XCTUnwrap(r.modules.first { $0.path == library })
        XCTAssertTrue(module.contains(r.frames[0].address), "frame 0 is in the library")
        XCTAssertTrue(try hasFrame(r, in: "library_fault", of: library))
        XCTAssertTrue(try hasFrame(r, in: "main", of: crasher), "its caller in the executable")
    }

    func testEveryThreadOfTheProgramIsInTheReport() throws {
        let (o, r, crasher) = try crash("threads")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        assertAarch64Report(r, signal: SIGSEGV)
        // Under qemu-user /proc/self/task also lists the emulator's own helper thread, which
        // blocks every signal: it is listed with that error, and only the program's threads answer.
        let answered = r.otherThreads.filter { !$0.frames.isEmpty }
        XCTAssertEqual(answered.count, 3, "\(r.otherThreads.map { ($0.id, $0.error ?? "frames") })")
        for thread in answered {
            XCTAssertEqual(thread.registers.map(\.name), CPUArchitecture.aarch64.registerNames)
            let libc = try XCTUnwrap(r.modules.first { $0.path.hasSuffix("/libc.so.6") })
            XCTAssertTrue(libc.contains(thread.frames[0].address), "each sleeper was interrupted inside libc's sleep")
        }
        XCTAssertTrue(r.otherThreads.filter { $0.frames.isEmpty }.allSatisfy { $0.error?.contains("blocks signals") == true })
        XCTAssertTrue(try hasFrame(r, in: "null_write", of: crasher))
    }

    func testUncaughtCxxExceptionIsReportedWithItsTypeAndMessage() throws {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Tests/CrashProbes/aarch64/uncaught.cpp").path
        let program = programs + "/uncaught"
        _ = try TestSupport.shell("aarch64-linux-gnu-g++ -g -O1 '\(source)' -o '\(program)'")
        let o = try runUnderEmulation(program, [])
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        let r = try onlyReport()
        assertAarch64Report(r, signal: SIGABRT)
        XCTAssertEqual(r.message?.type, "std::runtime_error")
        XCTAssertEqual(r.message?.text, "thrown on aarch64")
    }

    // MARK: Signal safety of the aarch64 objects

    func testAarch64CrashPathObjectsImportOnlyAsyncSignalSafeFunctions() throws {
        let objects = try Aarch64Emulation.preloadDirectory() + "/objects"
        let findings = try CrashPathImports.check(objectsIn: objects, nm: "aarch64-linux-gnu-nm", unwindPrefix: "_Uaarch64_")
        XCTAssertEqual(findings.missingObjects, [], "tools/build-preload leaves one object per source in \(objects)")
        XCTAssertEqual(findings.offending, [], "aarch64 crash-path objects import functions that are not async-signal-safe")
        XCTAssertEqual(findings.unbound, [], "crash_path_binding.c must call these once at start")
    }
}
