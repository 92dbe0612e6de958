// Real crashes of a real child process: how it died, and the report it left.
import CFaultlineCrash
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class CrashCaptureTests: XCTestCase {
    var dataDir = ""
    var crashDir: String { dataDir + "/crashes" }
    let crasher = TestSupport.product("faultline-crasher")

    override func setUp() { dataDir = TestSupport.makeTemporaryDirectory("crash") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dataDir) }

    /// Crashes the crasher in `mode` (Swift's own backtracer off unless asked) and returns the outcome.
    func crash(
        _ mode: String, _ extra: [String] = [], swiftBacktrace: String = "enable=no",
        timeout: TimeInterval = 60
    ) throws -> TestSupport.Outcome {
        try TestSupport.run(
            crasher, [mode, "--data-dir", dataDir] + extra,
            environment: ["SWIFT_BACKTRACE": swiftBacktrace], timeout: timeout)
    }

    func onlyReport(file: StaticString = #filePath, line: UInt = #line) throws -> CrashReport {
        let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1, "expected exactly one report in \(crashDir)", file: file, line: line)
        let path = try XCTUnwrap(reports.first, file: file, line: line)
        return try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Address range of a symbol in the crasher, from its ELF symbol table.
    func symbolRange(_ name: String) throws -> ClosedRange<UInt64> {
        let out = try TestSupport.shell("nm -S --defined-only '\(crasher)' | grep -E ' [tT] \(name)$'")
        let f = out.split(separator: " ")
        let start = try XCTUnwrap(UInt64(f[0], radix: 16)), size = try XCTUnwrap(UInt64(f[1], radix: 16))
        return start...(start + size - 1)
    }

    func assertSaneReport(_ r: CrashReport, signal: Int32, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.signal.number, Int(signal), file: file, line: line)
        XCTAssertEqual(r.version, 2, file: file, line: line)
        XCTAssertFalse(r.frames.isEmpty, file: file, line: line)
        if case .programCounter = r.frames[0] {} else { XCTFail("frame 0 must be the exact pc", file: file, line: line) }
        XCTAssertTrue(r.frames.dropFirst().allSatisfy(\.isReturnAddress), file: file, line: line)
        let exe = r.modules.first { $0.path == r.executable }
        XCTAssertNotNil(exe?.buildID, "the executable's build-id is recorded", file: file, line: line)
        XCTAssertTrue(r.modules.contains { $0.path.hasSuffix("libc.so.6") && $0.buildID != nil }, file: file, line: line)
        XCTAssertEqual(r.registers.count, 18, file: file, line: line)
        XCTAssertEqual(r.context["release"]?.stringValue, "crasher@1.0", file: file, line: line)
    }

    // MARK: Signals from C

    func testEachCrashSignalFromCKillsWithThatSignalAndLeavesAReport() throws {
        let cases: [(String, Int32, String)] = [
            ("segv", SIGSEGV, "probe_segv"), ("bus", SIGBUS, "probe_bus"),
            ("fpe", SIGFPE, "probe_fpe"), ("ill", SIGILL, "probe_ill"),
            ("trap", SIGTRAP, "probe_trap"), ("abort", SIGABRT, "probe_abort")
        ]
        for (mode, sig, function) in cases {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode)
            XCTAssertEqual(o.signal, sig, "\(mode): \(o)")
            let r = try onlyReport()
            assertSaneReport(r, signal: sig)
            // The crashing function appears by build-id + offset: some frame's module-relative
            // address falls inside the probe's symbol.
            let range = try symbolRange(function)
            let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
            let hits = r.frames.contains { exe.contains($0.address) && range.contains($0.lookupAddress(on: r.architecture).value - exe.base.value) }
            XCTAssertTrue(hits, "\(mode): no frame inside \(function) \(range)")
        }
    }

    // A crash before start's background preparation: StartupCrashTests.

    func testThreadNameThatIsNotUTF8StillGivesAReadableReport() throws {
        let o = try crash("bad-name-segv")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()  // parses: invalid bytes were escaped, valid UTF-8 kept
        XCTAssertEqual(r.threadName, "naïve-\u{ff}-w\u{c3}")
    }

    func testCallThroughNullPointerStillUnwindsToTheCaller() throws {
        let o = try crash("call-null")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        XCTAssertEqual(r.frames.first?.address.value, 0)
        let range = try symbolRange("probe_call_null")
        let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
        XCTAssertTrue(range.contains(r.frames[1].lookupAddress(on: r.architecture).value - exe.base.value), "frame 1 is the caller")
    }

    func testCallThroughAPointerToNoCodeStillUnwindsToTheCaller() throws {
        // The fault is the instruction fetch (its address is the pc): frame 0 is that address,
        // frame 1 the function that made the call, then its caller.
        for (mode, probe) in [("call-unmapped", "probe_call_unmapped"), ("call-data", "probe_call_data")] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode)
            XCTAssertEqual(o.signal, SIGSEGV, "\(mode): \(o)")
            let r = try onlyReport()
            XCTAssertEqual(r.frames.first?.address, r.signal.faultAddress, mode)
            let range = try symbolRange(probe)
            let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
            XCTAssertGreaterThan(r.frames.count, 2, mode)
            XCTAssertTrue(range.contains(r.frames[1].lookupAddress(on: r.architecture).value - exe.base.value), "\(mode): frame 1 is the caller")
        }
    }

    /// A jump to where no code is (a smashed return address, no call): the walk starts at a pc
    /// nothing can be read at, and what follows it on the stack is no return address. Still one
    /// report, frame 0 the jump's target, and the walk goes on from the frame-pointer chain.
    func testAJumpToNoCodeIsStillReported() throws {
        let o = try crash("jump-unmapped")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        XCTAssertEqual(r.frames.first?.address.value, 0xdeadbeef0)
        XCTAssertEqual(r.signal.faultAddress.value, 0xdeadbeef0)
        let range = try symbolRange("probe_jump_unmapped")
        let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
        XCTAssertFalse(r.frames.dropFirst().isEmpty, "the walk goes on past the wild pc")
        XCTAssertFalse(r.frames.dropFirst().contains { range.contains($0.address.value &- exe.base.value) }, "no frame is made up from the junk")
    }

    func testAVforkChildsCrashAndThenItsParentsAreTwoReports() throws {
        // The child crashed in the parent's memory, with the parent's state: it gets its own
        // event id, and the parent, crashing after it, neither waits on the child's claim nor
        // removes its report.
        let o = try crash("vfork-child-then-parent")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let reports = try TestSupport.files(in: crashDir, suffix: ".crash.json").map {
            try CrashReport.parse(Data(contentsOf: URL(fileURLWithPath: $0)))
        }
        XCTAssertEqual(reports.count, 2, o.description)
        XCTAssertEqual(Set(reports.map(\.eventID)).count, 2)
        XCTAssertEqual(Set(reports.map(\.pid)).count, 2, "one report from each process")
        XCTAssertTrue(reports.allSatisfy { $0.signal.number == Int(SIGSEGV) })
    }

    // MARK: Swift traps

    func testSwiftTrapsAreReportedAsSIGILL() throws {
        for mode in ["swift-force-unwrap", "swift-index", "swift-fatal", "swift-overflow"] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode)
            XCTAssertEqual(o.signal, SIGILL, "\(mode): \(o)")
            assertSaneReport(try onlyReport(), signal: SIGILL)
        }
    }

    // MARK: Stack overflow on every kind of thread

    func testStackOverflowIsReportedOnMainThreadPthreadTaskAndDispatchWorker() throws {
        for mode in ["stack-overflow", "c-stack-overflow", "thread-stack-overflow", "task-stack-overflow", "dispatch-stack-overflow"] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode)
            XCTAssertEqual(o.signal, SIGSEGV, "\(mode): \(o)")
            let r = try onlyReport()
            XCTAssertTrue(r.stackOverflow, mode)
            let omitted = try XCTUnwrap(r.omitted, "\(mode): deep recursion keeps inner and outer frames")
            XCTAssertEqual(omitted.after, 192)
            XCTAssertGreaterThan(omitted.count, 1000)
            XCTAssertEqual(r.frames.count, 256)
            XCTAssertEqual(r.unwindStoppedBy, "end", "\(mode): the walk reached the thread's first frame")
        }
    }

    // MARK: Why it crashed

    func testSwiftFatalErrorMessageIsInTheReportAndTheEvent() throws {
        for (mode, message, line) in [
            ("swift-fatal", "crasher asked for fatalError", "main.swift"),
            ("swift-force-unwrap", "Unexpectedly found nil while unwrapping an Optional value", "SwiftFaults.swift")
        ] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode)
            XCTAssertEqual(o.signal, SIGILL, "\(mode): \(o)")
            let r = try onlyReport()
            let m = try XCTUnwrap(r.message, "\(mode): the runtime's fatal-error text is in the report")
            XCTAssertEqual(m.source, "swift")
            XCTAssertTrue(m.text.contains("Fatal error: " + message), m.text)
            let why = m.interpretation
            XCTAssertEqual(why.type, "Swift fatal error")
            XCTAssertEqual(why.value, message)
            XCTAssertTrue(why.file?.hasSuffix(line) == true, "\(why)")
            XCTAssertGreaterThan(why.line ?? 0, 0)
            let exception = try XCTUnwrap(CrashEvent.make(from: r)["exception"]?["values"]?[0])
            XCTAssertEqual(exception["type"]?.stringValue, "Swift fatal error")
            XCTAssertEqual(exception["value"]?.stringValue, message)
            XCTAssertEqual(exception["mechanism"]?["meta"]?["signal"]?["name"]?.stringValue, "SIGILL", "the signal stays in the mechanism")
        }
    }

    func testUncaughtCxxExceptionTypeAndWhatAreInTheReportAndTheEvent() throws {
        let o = try crash("cxx-throw")
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        XCTAssertTrue(
            o.stderr.contains("terminate called after throwing an instance of 'std::out_of_range'"),
            "libstdc++'s own handler still runs after ours: \(o.stderr.prefix(500))")
        let r = try onlyReport()
        XCTAssertEqual(r.message, CrashMessage(source: "c++", type: "std::out_of_range", text: "cache miss: zz"))
        let exception = try XCTUnwrap(CrashEvent.make(from: r)["exception"]?["values"]?[0])
        XCTAssertEqual(exception["type"]?.stringValue, "std::out_of_range")
        XCTAssertEqual(exception["value"]?.stringValue, "cache miss: zz")
    }

    func testFailedAssertMessageIsInTheReport() throws {
        let o = try crash("assert")
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        let r = try onlyReport()
        let m = try XCTUnwrap(r.message)
        XCTAssertEqual(m.source, "glibc")
        let why = m.interpretation
        XCTAssertEqual(why.type, "Assertion failed")
        XCTAssertEqual(why.value, "value > 5")
        XCTAssertTrue(why.file?.hasSuffix("crash_probes.c") == true, "\(why)")
        XCTAssertTrue(why.function?.contains("probe_assert") == true, "\(why)")
    }

    func testMessagesLongerThanTheBufferAreCutNotOverflowed() throws {
        let limit = Int(FAULTLINE_CRASH_MESSAGE_MAX_BYTES) - 1
        for mode in ["swift-fatal-long", "cxx-throw-long"] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode)
            XCTAssertNotNil(o.signal, "\(mode): \(o)")
            let r = try onlyReport()  // parses: valid JSON and UTF-8 however the cut fell
            let text = try XCTUnwrap(r.message?.text, mode)
            XCTAssertLessThanOrEqual(text.utf8.count, limit, mode)
            XCTAssertGreaterThan(text.utf8.count, limit - 4, "\(mode): cut at the limit (a UTF-8 sequence is not split)")
            XCTAssertFalse(text.contains("\u{FFFD}"), "\(mode): no broken character at the cut")
        }
    }

    func testNoMessageWhenTheRuntimeSaidNothing() throws {
        XCTAssertEqual(try crash("segv").signal, SIGSEGV)
        XCTAssertNil(try onlyReport().message, "a plain fault has no message")
    }

    func testPreloadedIntoUnmodifiedCCxxAndSwiftProgramsTheMessageIsReported() throws {
        let lib = try PreloadLibrary.path()
        let c = dataDir + "/assert.c", cxx = dataDir + "/throw.cpp"
        try "#include <assert.h>\nint main(int argc, char **argv) { (void)argv; assert(argc > 3); return 0; }\n"
            .write(toFile: c, atomically: false, encoding: .utf8)
        try "#include <stdexcept>\nint main() { throw std::invalid_argument(\"bad sku: 42\"); }\n"
            .write(toFile: cxx, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -g '\(c)' -o '\(dataDir)/assert' && c++ -g '\(cxx)' -o '\(dataDir)/throw'")
        let env = ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir]

        let a = try TestSupport.run(dataDir + "/assert", [], environment: env)
        XCTAssertEqual(a.signal, SIGABRT, a.description)
        let assertReport = try onlyReport()
        XCTAssertEqual(assertReport.message?.interpretation.value, "argc > 3")
        XCTAssertFalse(assertReport.modules.contains { $0.path.contains("libstdc++") }, "a C program gains no C++ runtime")
        try FileManager.default.removeItem(atPath: crashDir)

        let t = try TestSupport.run(dataDir + "/throw", [], environment: env)
        XCTAssertEqual(t.signal, SIGABRT, t.description)
        XCTAssertEqual(try onlyReport().message, CrashMessage(source: "c++", type: "std::invalid_argument", text: "bad sku: 42"))
        try FileManager.default.removeItem(atPath: crashDir)

        // A Swift program that never heard of Faultline: the runtime's buffer is found by dlsym.
        let swift = dataDir + "/fatal.swift"
        try "if CommandLine.arguments.count > 0 { fatalError(\"preloaded \\(CommandLine.arguments.count)\") }\n"
            .write(toFile: swift, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("swiftc -O '\(swift)' -o '\(dataDir)/fatal'")
        let s = try TestSupport.run(dataDir + "/fatal", [], environment: env.merging(["SWIFT_BACKTRACE": "enable=no"]) { a, _ in a })
        XCTAssertEqual(s.signal, SIGILL, s.description)
        let why = try XCTUnwrap(try onlyReport().message?.interpretation)
        XCTAssertEqual(why.type, "Swift fatal error")
        XCTAssertEqual(why.value, "preloaded 1")
    }

    // MARK: Threads

    func testEveryThreadIsInTheReportWithItsOwnFrames() throws {
        let o = try crash("parked-threads-segv", ["--threads", "8"], timeout: 30)
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        XCTAssertLessThan(o.duration, 5, "the blocked thread is not waited for")
        let r = try onlyReport()
        let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
        let parked = Dictionary(r.otherThreads.filter { $0.name.hasPrefix("park-") }.map { ($0.name, $0) }) { a, _ in a }
        XCTAssertEqual(Set(parked.keys), ["park-sleep", "park-cond", "park-read", "park-poll", "park-spin", "park-mutex", "park-pause", "park-blocked"])
        let functions = [
            "park-sleep": "probe_park_sleep", "park-cond": "probe_park_cond_wait", "park-read": "probe_park_read",
            "park-poll": "probe_park_poll", "park-spin": "probe_park_spin", "park-mutex": "probe_park_mutex_wait",
            "park-pause": "probe_park_pause"
        ]
        for (name, function) in functions {
            let thread = try XCTUnwrap(parked[name])
            XCTAssertFalse(thread.frames.isEmpty, "\(name): \(thread.error ?? "")")
            if case .programCounter = thread.frames.first {} else { XCTFail("\(name): frame 0 is where it was interrupted") }
            XCTAssertEqual(thread.registers.count, 18, name)
            // Its own parking function is on its stack (symbolicated through the ELF symbol table).
            let range = try symbolRange(function)
            XCTAssertTrue(
                thread.frames.contains { $0.address.value >= exe.base.value && range.contains($0.address.value - exe.base.value) },
                "\(name): \(function) is among its frames")
        }
        XCTAssertEqual(parked["park-spin"]?.state, "running")
        XCTAssertEqual(parked["park-sleep"]?.state, "sleeping")
        let blocked = try XCTUnwrap(parked["park-blocked"])
        XCTAssertTrue(blocked.frames.isEmpty)
        XCTAssertTrue(blocked.error?.contains("blocks signals") == true, blocked.error ?? "")
        // The event carries all of them in Sentry's threads interface, the crashing thread first.
        let threads = try XCTUnwrap(CrashEvent.make(from: r)["threads"]?["values"]?.arrayValue)
        XCTAssertEqual(threads.first?["crashed"]?.boolValue, true)
        XCTAssertEqual(threads.first?["id"]?.int64Value, Int64(r.threadID))
        XCTAssertEqual(threads.count, 1 + r.otherThreads.count)
        let sleeper = try XCTUnwrap(threads.first { $0["name"]?.stringValue == "park-sleep" })
        XCTAssertEqual(sleeper["stacktrace"]?["frames"]?.arrayValue?.count, parked["park-sleep"]?.frames.count)
        XCTAssertNotNil(sleeper["stacktrace"]?["registers"]?["rip"])
    }

    func testFiveHundredThreadsAllMakeTheReport() throws {
        let o = try crash("parked-threads-segv", ["--threads", "500"], timeout: 60)
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        let parked = r.otherThreads.filter { $0.name.hasPrefix("park-") }
        XCTAssertEqual(parked.count, 500)
        XCTAssertEqual(r.threadsOmitted, 0)
        // Every thread is accounted for: walked, or reported with why not. The one that blocks every
        // signal never answers; the others answer unless the dump's bounded time (300 ms in all)
        // ran out first (those not asked by then say so), or the thread had not unblocked signals
        // yet when it was looked at: both happen to some on a heavily loaded machine, and the
        // report says so.
        let silent = parked.filter { $0.frames.isEmpty }
        XCTAssertTrue(
            silent.allSatisfy { $0.error?.contains("blocks") == true || $0.error?.contains("deadline") == true }, "\(Set(silent.compactMap(\.error)))")
        XCTAssertTrue(parked.contains { $0.name == "park-blocked" && $0.frames.isEmpty && $0.error?.contains("blocks") == true })
        XCTAssertGreaterThan(parked.count - silent.count, 0, "the dump walks threads")
        print("500 parked threads: \(parked.count - silent.count) walked, \(silent.count - 1) past the deadline")
        XCTAssertTrue(parked.allSatisfy { $0.frames.count <= 64 }, "at most 64 frames per thread")
    }

    /// Every thread's stack has a time budget (a thousand threads must not keep a crashed process
    /// alive): the threads not asked within it are still listed, and say why they have no frames.
    func testThreadsNotAskedWithinTheBudgetAreListedAndSaySo() throws {
        let o = try crash("parked-threads-segv", ["--threads", "40", "--thread-dump-budget-ms", "0"], timeout: 30)
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        let parked = r.otherThreads.filter { $0.name.hasPrefix("park-") }
        XCTAssertEqual(parked.count, 40, "every thread is listed, asked or not")
        let notAsked = parked.filter { $0.error?.contains("not asked") == true }
        XCTAssertGreaterThan(notAsked.count, 30, "with no time at all, at most the first few are asked: \(Set(parked.compactMap(\.error)))")
        XCTAssertTrue(notAsked.allSatisfy { $0.frames.isEmpty && !$0.state.isEmpty })
    }

    func testStackOverflowOnThreadsThatExistedBeforeStartIsReported() throws {
        // Neither went through the pthread_create wrapper: start gives them alternate stacks.
        for mode in ["pre-start-thread-overflow", "pre-start-clone-overflow"] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash(mode, timeout: 30)
            XCTAssertEqual(o.signal, SIGSEGV, "\(mode): \(o)")
            let r = try onlyReport()
            XCTAssertTrue(r.stackOverflow, "\(mode): reported as a stack overflow")
            XCTAssertNotEqual(r.threadID, r.pid, "\(mode): on the pre-existing thread")
        }
    }

    func testCrashOnSecondaryThreadNamesThatThread() throws {
        let o = try crash("thread-segv")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        XCTAssertNotEqual(r.threadID, r.pid, "the crashing thread is not the main thread")
        XCTAssertEqual(r.threadName, "probe-worker", "the report names the thread that crashed")
    }

    func testFourThreadsCrashingAtOnceLeaveExactlyOneReportAndNoHang() throws {
        for _ in 0..<3 {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash("threads-segv", timeout: 30)
            XCTAssertEqual(o.signal, SIGSEGV, o.description)
            XCTAssertLessThan(o.duration, 15, "no hang")
            _ = try onlyReport()
        }
    }

    // MARK: Modules loaded after start

    func testCrashInsideLibraryDlopenedAfterStartListsItWithBuildID() throws {
        let src = dataDir + "/late.c", lib = dataDir + "/liblate.so"
        try "__attribute__((noinline)) void faultline_test_crash_in_library(void) { *(volatile int *)8 = 1; }\n"
            .write(toFile: src, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -g -O1 -shared -fPIC -Wl,--build-id '\(src)' -o '\(lib)'")
        let o = try crash("dlopen", ["--library", lib])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        let module = try XCTUnwrap(r.modules.first { $0.path == lib }, "dlopen'ed library is listed")
        let expected = try TestSupport.shell("readelf -n '\(lib)' | awk '/Build ID/ {print $3}'").trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(module.buildID?.hex, expected)
        XCTAssertTrue(module.contains(r.frames[0].address), "the crashing pc is inside the library")
    }

    // MARK: Chaining

    func testChainsToAPreviousHandlerAndStillDiesWithTheSignal() throws {
        let marker = dataDir + "/previous-ran"
        let o = try crash("segv", ["--previous-handler", marker])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        _ = try onlyReport()
        XCTAssertEqual(try String(contentsOfFile: marker, encoding: .utf8), "previous-handler 11\n")
    }

    func testAFaultThePreviousHandlerRecoversFromIsNoCrash() throws {
        // A JIT or GC barrier handles its own faults and the program goes on: no report may stay.
        let o = try crash("recover", ["--recovering-handler"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertTrue(o.stdout.contains("recovered 7"), o.stdout)
        XCTAssertTrue(TestSupport.files(in: crashDir, suffix: ".crash.json").isEmpty, "the report of a recovered fault is withdrawn")
    }

    func testAfterARecoveredFaultARealCrashIsStillReported() throws {
        let o = try crash("recover-then-segv", ["--recovering-handler"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        XCTAssertTrue(o.stdout.contains("recovered 7"), o.stdout)
        let r = try onlyReport()
        let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
        let range = try symbolRange("probe_segv")
        XCTAssertTrue(range.contains(r.frames[0].address.value - exe.base.value), "the report is the real crash's")
    }

    /// Runs `threads` threads whose faults the app's own handler recovers, `stagger` µs apart,
    /// `runs` times: each run must end normally, promptly, with every fault recovered and no report.
    func assertFaultsRecovered(
        threads: Int, staggerMicroseconds stagger: Int, runs: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        for run in 0..<runs {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash("recover-threads", ["--recovering-handler", "--threads", "\(threads)", "--stagger-us", "\(stagger)"], timeout: 30)
            XCTAssertEqual(o.exitCode, 0, "run \(run): \(o)", file: file, line: line)
            XCTAssertTrue(o.stdout.contains("recovered \(threads) of \(threads)"), "run \(run): \(o.stdout)", file: file, line: line)
            XCTAssertLessThan(o.duration, 5, "run \(run): nobody waited out a timeout", file: file, line: line)
            XCTAssertEqual(
                TestSupport.files(in: crashDir, suffix: ".crash.json"), [], "run \(run): recovered faults leave no report",
                file: file, line: line)
        }
    }

    func testTwoThreadsWhoseFaultsTheAppRecoversRunToCompletion() throws {
        // Thread A faults 2,000 frames deep (a long unwind), thread B 1 ms later: B arrives while
        // A's report is being written, must notice A's fault was recovered, and take its own turn.
        try assertFaultsRecovered(threads: 2, staggerMicroseconds: 1000, runs: 4)
    }

    func testEightThreadsRecoveringAtOnceRunToCompletion() throws {
        try assertFaultsRecovered(threads: 8, staggerMicroseconds: 0, runs: 3)
    }

    func testOneThreadRecoveringWhileAnotherCrashesLeavesOneReportForTheRealCrash() throws {
        let range = try symbolRange("probe_segv")
        for (run, stagger) in [0, 0, 300, 1000].enumerated() {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash("recover-while-crashing", ["--recovering-handler", "--threads", "2", "--stagger-us", "\(stagger)"], timeout: 30)
            XCTAssertEqual(o.signal, SIGSEGV, "run \(run): \(o)")
            XCTAssertLessThan(o.duration, 5, "run \(run): nobody waited out a timeout")
            let r = try onlyReport()
            let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
            XCTAssertTrue(
                range.contains(r.frames[0].address.value - exe.base.value),
                "run \(run): the report is the real crash's, not the recovered fault's")
        }
    }

    func testNoSymbolIsBoundAfterTheFault() throws {
        // The loader prints each lazy binding under LD_DEBUG=bindings, on stderr, in order with
        // the marker the crasher writes just before it faults.
        let o = try TestSupport.run(
            crasher, ["segv-marked", "--data-dir", dataDir],
            environment: ["SWIFT_BACKTRACE": "enable=no", "LD_DEBUG": "bindings"], timeout: 60)
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        _ = try onlyReport()
        let after = try XCTUnwrap(o.stderr.range(of: "faultline-test: faulting now"), "the marker is printed").upperBound
        let late = o.stderr[after...].split(separator: "\n").filter { $0.contains("binding file") }
        XCTAssertEqual(late.map { String($0.drop { $0 != "s" }) }, [], "symbols bound inside the crash handler")

        // The same for the preload library in a plain C program.
        let lib = try PreloadLibrary.path()
        let src = dataDir + "/marked.c", exe = dataDir + "/marked"
        try """
        #include <unistd.h>
        int main(void) {
            usleep(300000);  /* start's background preparation (another thread) binds its own symbols */
            static const char m[] = "faultline-test: faulting now\\n";
            write(2, m, sizeof m - 1);
            *(volatile int *)16 = 1;
            return 0;
        }
        """.write(toFile: src, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -g '\(src)' -o '\(exe)'")
        try? FileManager.default.removeItem(atPath: crashDir)
        let c = try TestSupport.run(exe, [], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir, "LD_DEBUG": "bindings"])
        XCTAssertEqual(c.signal, SIGSEGV, c.description)
        _ = try onlyReport()
        let cAfter = try XCTUnwrap(c.stderr.range(of: "faultline-test: faulting now"), "the marker is printed").upperBound
        XCTAssertEqual(
            c.stderr[cAfter...].split(separator: "\n").filter { $0.contains("binding file") }.map(String.init), [],
            "symbols bound inside the preloaded crash handler")
    }

    func testSwiftsOwnBacktracerStillRunsAfterOurs() throws {
        let o = try crash("swift-index", swiftBacktrace: "enable=yes,interactive=no,color=no", timeout: 120)
        XCTAssertEqual(o.signal, SIGILL, o.description)
        _ = try onlyReport()
        XCTAssertTrue(o.stderr.contains("Program crashed"), "Swift's backtracer printed its report:\n\(o.stderr.prefix(3000))")
    }

    func testSwiftsBacktracerIsNotRunAfterOurReportUnlessAskedFor() throws {
        // Swift's runtime installs its backtracer before main by default on Linux (no
        // SWIFT_BACKTRACE in the environment): Faultline's report is the crash's record, and the
        // crash ends by its own signal without a second report on the app's stderr.
        let plain = try TestSupport.run(crasher, ["swift-index", "--data-dir", dataDir], removingEnvironment: ["SWIFT_BACKTRACE"], timeout: 60)
        XCTAssertEqual(plain.signal, SIGILL, plain.description)
        assertSaneReport(try onlyReport(), signal: SIGILL)
        XCTAssertTrue(plain.stderr.contains("Fatal error: Index out of range"), "the runtime's own message stays: \(plain.stderr)")
        XCTAssertFalse(plain.stderr.contains("Backtracing"), "Swift's backtracer did not run: \(plain.stderr.prefix(2000))")
        XCTAssertFalse(plain.stderr.contains("swift-runtime"), plain.stderr)
        // An unmodified Swift program: without Faultline the runtime's backtracer is really there;
        // preloaded, the same rule holds; asked for, it runs after our report.
        let root = TestSupport.repositoryRoot().path
        let lib = try PreloadLibrary.path()
        let program = dataDir + "/startup-swift"
        _ = try TestSupport.shell("swiftc -g '\(root)/Fixtures/CrashPrograms/startup.swift' -o '\(program)'")
        let without = try TestSupport.run(program, ["trap"], removingEnvironment: ["SWIFT_BACKTRACE"], timeout: 120)
        XCTAssertEqual(without.signal, SIGILL, without.description)
        XCTAssertTrue(without.stderr.contains("Backtracing"), "without Faultline Swift's backtracer prints: \(without.stderr.prefix(2000))")
        try FileManager.default.removeItem(atPath: crashDir)
        let preloaded = try TestSupport.run(
            program, ["trap"], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir],
            removingEnvironment: ["SWIFT_BACKTRACE"], timeout: 60)
        XCTAssertEqual(preloaded.signal, SIGILL, preloaded.description)
        XCTAssertFalse(preloaded.stderr.contains("Backtracing"), preloaded.stderr)
        _ = try onlyReport()
        try FileManager.default.removeItem(atPath: crashDir)
        let asked = try TestSupport.run(
            program, ["trap"],
            environment: [
                "LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir,
                "SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no"
            ], timeout: 120)
        XCTAssertEqual(asked.signal, SIGILL, asked.description)
        XCTAssertTrue(asked.stderr.contains("Backtracing"), asked.stderr)
        _ = try onlyReport()
    }

    // MARK: Hostile conditions

    func testHeapCorruptionAbortInsideFreeStillWritesAReportPromptly() throws {
        let o = try crash("double-free", timeout: 30)
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        XCTAssertLessThan(o.duration, 10)
        assertSaneReport(try onlyReport(), signal: SIGABRT)
    }

    func testLoaderLockHeldForeverStillEndsPromptlyWithAFramePointerReport() throws {
        // Another thread sits inside dl_iterate_phdr forever; libunwind's unw_step waits for the
        // same lock with every signal blocked. The watchdog must still fire, walk frame pointers,
        // write the report and end the process by its own signal.
        let o = try crash("loader-lock-segv", timeout: 30)
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        XCTAssertLessThan(o.duration, 15, "ended by the 5 s watchdog, not hung")
        let r = try onlyReport()
        XCTAssertEqual(r.unwindStoppedBy, "watchdog")
        let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
        let range = try symbolRange("probe_segv_while_loader_lock_held")
        XCTAssertTrue(
            r.frames.contains { exe.contains($0.address) && range.contains($0.lookupAddress(on: r.architecture).value - exe.base.value) },
            "the frame-pointer walk reaches the caller")
    }

    func testAsPIDOneTheProcessEndsExactlyAsWithoutFaultlineAndReports() throws {
        guard (try? TestSupport.shell("unshare --pid --fork --mount-proc true")) != nil else {
            throw XCTSkip("unshare --pid is not permitted here")
        }
        // As PID 1, raise and tgkill do not kill (abort() falls back to a faulting instruction), but
        // a re-executed fault does. Each program must end the same way with and without the handler.
        let lib = try PreloadLibrary.path()
        let programs = [
            "abort": "#include <stdlib.h>\nint main(void) { abort(); }\n",
            "segv": "int main(void) { *(volatile int *)16 = 1; return 0; }\n",
            "assert": "#include <assert.h>\nint main(int argc, char **argv) { (void)argv; assert(argc > 3); return 0; }\n"
        ]
        for (name, source) in programs.sorted(by: { $0.key < $1.key }) {
            try source.write(toFile: "\(dataDir)/\(name).c", atomically: false, encoding: .utf8)
            _ = try TestSupport.shell("cc -g '\(dataDir)/\(name).c' -o '\(dataDir)/\(name)'")
            let unshare = ["--pid", "--fork", "--mount-proc", "\(dataDir)/\(name)"]
            let without = try TestSupport.run("/usr/bin/unshare", unshare, environment: [:], timeout: 30)
            try? FileManager.default.removeItem(atPath: crashDir)
            // The preload library goes into unshare as well; it starts there too but does not crash.
            let with = try TestSupport.run("/usr/bin/unshare", unshare, environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir], timeout: 30)
            XCTAssertEqual(with.signal, without.signal, "\(name): \(with) vs without Faultline \(without)")
            XCTAssertEqual(with.exitCode, without.exitCode, "\(name): \(with) vs without Faultline \(without)")
            let r = try onlyReport()
            XCTAssertEqual(r.pid, 1, name)
            XCTAssertEqual(r.signal.name, name == "segv" ? "SIGSEGV" : "SIGABRT", "\(name): the report is the crash's cause, not abort's fallback")
        }
        // The SDK-linked crasher as init: abort() ends by its fallback's fault, as the plain C
        // program's did without Faultline above; the report still names SIGABRT.
        try? FileManager.default.removeItem(atPath: crashDir)
        let o = try TestSupport.run(
            "/usr/bin/unshare", ["--pid", "--fork", "--mount-proc", crasher, "abort", "--data-dir", dataDir],
            environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: 30)
        XCTAssertEqual(o.signal, SIGSEGV, "as init, abort() ends by its fallback's fault: \(o)")
        XCTAssertEqual(try onlyReport().signal.number, Int(SIGABRT))
    }

    func testKillDuringReportWritingLeavesNoReportOrAWholeOne() throws {
        // A deep stack overflow keeps the handler busy for tens of milliseconds; kill -9 lands
        // at random points before, during and after the write.
        var whole = 0, none = 0
        for i in 0..<12 {
            try? FileManager.default.removeItem(atPath: crashDir)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: crasher)
            p.arguments = ["stack-overflow", "--data-dir", dataDir]
            p.environment = ["SWIFT_BACKTRACE": "enable=no", "PATH": "/usr/bin:/bin"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(20_000 + (i * 37_000) % 300_000))
            kill(p.processIdentifier, SIGKILL)
            let end = p.awaitEnd()
            XCTAssertNotNil(end.signal, end.description)
            // SIGKILL, or SIGSEGV when the handler finished before the kill landed.
            XCTAssertTrue([SIGKILL, SIGSEGV].contains(end.signal ?? 0), "died by \(end)")
            let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
            XCTAssertLessThanOrEqual(reports.count, 1, "one crash, at most one report")
            for path in reports {
                let report = try CrashReport.parse(Data(contentsOf: URL(fileURLWithPath: path)))
                XCTAssertTrue(report.stackOverflow, "a visible report is whole and describes the overflow")
                whole += 1
            }
            if reports.isEmpty {
                none += 1
                if end.signal == SIGSEGV { XCTFail("the process died of its crash but left no report") }
            }
        }
        // The kill times are spread so that both outcomes occur: otherwise the test proves nothing
        // about a kill landing mid-write (a broken writer would show up as a torn or missing report).
        XCTAssertGreaterThan(whole, 0, "no run got as far as a whole report")
        XCTAssertEqual(whole + none, 12)
    }

    // MARK: Breadcrumbs and context

    func testContextReplacedWhileTheReportIsWrittenIsNeverTorn() throws {
        for run in 0..<5 {
            try? FileManager.default.removeItem(atPath: crashDir)
            let o = try crash("context-churn-segv")
            XCTAssertEqual(o.signal, SIGSEGV, "run \(run): \(o)")
            let r = try onlyReport()  // throws if the context made the report unparseable
            let release = r.context["release"]?.stringValue
            XCTAssertTrue(["churn-a", "churn-b"].contains(release), "run \(run): context \(r.context.jsonString.prefix(200))")
            if release == "churn-a" { XCTAssertEqual(r.context["pad"]?.stringValue?.count, 5999 - 30, "run \(run): the long one whole") }
        }
    }

    func testCrashAfterHundredLogsCarriesTheLastThirtyTwoInOrder() throws {
        let o = try crash("segv", ["--logs", "100"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let r = try onlyReport()
        XCTAssertEqual(r.breadcrumbs.count, 32)
        XCTAssertEqual(r.breadcrumbs.map { $0["message"]?.stringValue ?? "" }, (68..<100).map { "log line \($0)" })
        XCTAssertEqual(r.breadcrumbs.last?["data"]?["index"]?.int64Value, 99)
    }

    func testASignalTheProcessIgnoredBeforeStartIsStillIgnoredWhenSent() throws {
        // Sent with kill while ignored (as a parent's `trap '' SEGV` leaves it): the process lives
        // on, as without Faultline, and nothing is reported.
        let o = try crash("signal-self", ["--ignored", "11,5,7"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertTrue(o.stdout.contains("survived"), o.description)
        XCTAssertEqual(TestSupport.files(in: crashDir, suffix: ".crash.json"), [])
        // Not ignored: the same kill is a crash, reported, and ends the process by that signal.
        let sent = try crash("signal-self", ["--ignored", "5,7"])
        XCTAssertEqual(sent.signal, SIGSEGV, sent.description)
        let report = try onlyReport()
        XCTAssertEqual(report.signal.number, Int(SIGSEGV))
        // Sent, not a fault: no address (si_addr would be the sender's pid), the sender named.
        XCTAssertEqual(report.signal.faultAddress, Address(0))
        XCTAssertEqual(report.signal.senderPID, report.pid)
        let value = CrashEvent.make(from: report)["exception"]?["values"]?[0]?["value"]?.stringValue
        XCTAssertEqual(value, "SIGSEGV / SI_USER from pid \(report.pid)")
    }

    func testAFaultOrAbortIsReportedEvenWhenItsSignalWasIgnored() throws {
        // The kernel forces a fault's default action, and abort() ends the process whatever the
        // disposition: both are crashes.
        let fault = try crash("segv", ["--ignored", "11"])
        XCTAssertEqual(fault.signal, SIGSEGV, fault.description)
        XCTAssertEqual(try onlyReport().signal.number, Int(SIGSEGV))
        try FileManager.default.removeItem(atPath: crashDir)
        let abort = try crash("abort", ["--ignored", "6"])
        XCTAssertEqual(abort.signal, SIGABRT, abort.description)
        XCTAssertEqual(try onlyReport().signal.number, Int(SIGABRT))
    }

    func testARelativeDataDirectoryMeansTheOneAtStartAfterTheAppMoves() throws {
        let base = dataDir + "-relative", elsewhere = dataDir + "-elsewhere"
        for d in [base, elsewhere] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        defer { for d in [base, elsewhere] { try? FileManager.default.removeItem(atPath: d) } }
        let o = try TestSupport.run(
            crasher, ["segv", "--data-dir", "app-data", "--start-in", base, "--chdir-after-start", elsewhere],
            environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        XCTAssertEqual(TestSupport.files(in: base + "/app-data/crashes", suffix: ".crash.json").count, 1, o.description)
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere + "/app-data"))
    }

    func testBreadcrumbRecordsReachTheReportAsTheSDKsJSON() throws {
        // The log path writes binary records into the ring; the handler writes them as hex and
        // the report reader renders them: every type, escapes, a duplicate key, a shortened line.
        let o = try crash("segv", ["--escaped-logs"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let path = try XCTUnwrap(TestSupport.files(in: crashDir, suffix: ".crash.json").first)
        let raw = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(raw.contains("{\"\(BreadcrumbRecord.reportKey)\":\"fb01"), "records as hex in the report")
        let crumbs = try onlyReport().breadcrumbs
        let line = try XCTUnwrap(crumbs.first { $0["level"]?.stringValue == "warning" })
        XCTAssertEqual(line["message"]?.stringValue, "quote\" back\\ nl\n ctl\u{01} ü 😀")
        XCTAssertEqual(line["category"]?.stringValue, "log")
        let data = try XCTUnwrap(line["data"])
        XCTAssertEqual(data["s"]?.stringValue, "last")
        XCTAssertEqual(data["i"]?.int64Value, Int64.min)
        XCTAssertEqual(data["d"]?.doubleValue, 0.1)
        XCTAssertEqual(data["w"]?.doubleValue, 2.0)
        XCTAssertEqual(data["b"]?.boolValue, false)
        XCTAssertEqual(data["code.filepath"]?.stringValue, "faultline_crasher/main.swift")
        XCTAssertNotNil(data["code.lineno"]?.int64Value)
        let t = try XCTUnwrap(line["timestamp"]?.doubleValue)
        XCTAssertLessThan(abs(t - Date().timeIntervalSince1970), 600)
        let long = try XCTUnwrap(crumbs.last)
        XCTAssertTrue(long["message"]?.stringValue?.hasSuffix("…") ?? false)
        XCTAssertNil(long["data"]?["k"])
    }

    // MARK: Next launch

    func reportIDs() throws -> [String] {
        try TestSupport.files(in: crashDir, suffix: ".crash.json").map { try CrashReport.parse(Data(contentsOf: URL(fileURLWithPath: $0))).eventID }
    }

    func testNextLaunchTurnsEveryPendingReportIntoExactlyOneEvent() throws {
        XCTAssertEqual(try crash("segv").signal, SIGSEGV)
        let firstID = try XCTUnwrap(try reportIDs().first)
        // The second run picks up the first crash at start, then crashes itself.
        let second = try crash("abort")
        XCTAssertEqual(second.signal, SIGABRT)
        let secondSummary = try JSONValue.parse(Data(second.stdout.utf8))
        XCTAssertEqual(secondSummary["converted"]?.arrayValue?.compactMap(\.stringValue), [firstID])
        let secondID = try XCTUnwrap(try reportIDs().first)
        XCTAssertNotEqual(firstID, secondID)
        let ids: Set = [firstID, secondID]

        let first = try crash("none")
        XCTAssertEqual(first.exitCode, 0, first.description)
        let summary = try JSONValue.parse(Data(first.stdout.utf8))
        XCTAssertEqual(summary["converted"]?.arrayValue?.compactMap(\.stringValue), [secondID])
        XCTAssertTrue(TestSupport.files(in: crashDir, suffix: ".crash.json").isEmpty, "reports are removed once queued")

        let envelopes = try TestSupport.files(in: dataDir + "/outbox", suffix: ".envelope").map {
            try Envelope.parse(Data(contentsOf: URL(fileURLWithPath: $0)))
        }
        XCTAssertEqual(envelopes.count, 2)
        XCTAssertEqual(Set(envelopes.compactMap(\.eventID)), ids)
        for env in envelopes {
            let event = try JSONValue.parse(try XCTUnwrap(env.items.first { $0.type == "event" }).payload)
            XCTAssertEqual(event["level"]?.stringValue, "fatal")
            XCTAssertEqual(event["platform"]?.stringValue, "native")
            let exc = try XCTUnwrap(event["exception"]?["values"]?[0])
            XCTAssertEqual(exc["mechanism"]?["type"]?.stringValue, "signalhandler")
            XCTAssertNotNil(exc["mechanism"]?["meta"]?["signal"]?["number"]?.int64Value)
            let frames = try XCTUnwrap(exc["stacktrace"]?["frames"]?.arrayValue)
            XCTAssertFalse(frames.isEmpty)
            XCTAssertEqual(exc["stacktrace"]?["instruction_addr_adjustment"]?.stringValue, "all_but_first")
            let images = try XCTUnwrap(event["debug_meta"]?["images"]?.arrayValue)
            let exe = try XCTUnwrap(
                images.first { $0["code_file"]?.stringValue == crasher || $0["code_file"]?.stringValue?.hasSuffix("/faultline-crasher") == true })
            let codeID = try XCTUnwrap(exe["code_id"]?.stringValue.flatMap(BuildID.init(hex:)))
            XCTAssertEqual(exe["debug_id"]?.stringValue, codeID.debugID.description)
            XCTAssertTrue(env.items.contains { $0.type == "session" }, "the crashed session is reported")
            // The crash joins the trace the crashed process's logs and events carried.
            let traceID = try XCTUnwrap(event["contexts"]?["trace"]?["trace_id"]?.stringValue, "crash events carry the trace context")
            XCTAssertEqual(traceID.count, 32)
            XCTAssertEqual(event["contexts"]?["trace"]?["span_id"]?.stringValue?.count, 16)
        }

        let again = try crash("none")
        XCTAssertEqual(try JSONValue.parse(Data(again.stdout.utf8))["converted"]?.arrayValue?.count, 0, "converted exactly once")
    }

    func testCorruptOrTruncatedReportIsSetAsideAndDoesNotBlockOthers() throws {
        XCTAssertEqual(try crash("segv").signal, SIGSEGV)
        let good = try XCTUnwrap(TestSupport.files(in: crashDir, suffix: ".crash.json").first)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: crashDir + "/truncated.crash.json"))
        try Data("not json at all".utf8).write(to: URL(fileURLWithPath: crashDir + "/garbage.crash.json"))
        let o = try crash("none")
        XCTAssertEqual(o.exitCode, 0, o.description)
        let summary = try JSONValue.parse(Data(o.stdout.utf8))
        XCTAssertEqual(summary["converted"]?.arrayValue?.count, 1)
        XCTAssertEqual(Set(summary["set_aside"]?.arrayValue?.compactMap(\.stringValue) ?? []), ["truncated.crash.json", "garbage.crash.json"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: crashDir + "/corrupt/garbage.crash.json"))
    }

    func testACrashMakesItsDirectoryWhenItIsMissing() throws {
        // Start creates no directory on the app's thread: a data directory two levels below an
        // existing one, and a crash before the background preparation has made anything.
        let base = dataDir
        dataDir += "/not/yet"
        defer { dataDir = base }  // tearDown removes it all
        // Start's preparing thread (held back) is Faultline's, not the app's: named so from its
        // creation and left out of the report (it was listed with the app's name, "blocks signals").
        XCTAssertEqual(try crash("segv-before-preparation", ["--wait-for-thread", "faultline.start"]).signal, SIGSEGV)
        let early = try onlyReport()
        XCTAssertEqual(early.signal.number, Int(SIGSEGV))
        XCTAssertEqual(early.otherThreads.filter { $0.name == "faultline.start" }.count, 0, "\(early.otherThreads.map(\.name))")
        XCTAssertFalse(early.otherThreads.contains { $0.error?.hasPrefix("blocks signals") == true }, "\(early.otherThreads)")
        for dir in [dataDir, crashDir] {
            let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? Int)
            XCTAssertEqual(mode, 0o700, "\(dir) is private to the user")
        }
        // Removed while the app runs: the crash makes it again.
        for report in TestSupport.files(in: crashDir, suffix: ".crash.json") { try FileManager.default.removeItem(atPath: report) }
        let o = try crash("segv-without-crash-directory")
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        XCTAssertEqual(try onlyReport().signal.number, Int(SIGSEGV))
    }

    func testARelativeDataDirectoryIsMadeUnderTheWorkingDirectory() throws {
        let o = try TestSupport.shell("cd '\(dataDir)' && SWIFT_BACKTRACE=enable=no '\(crasher)' none --data-dir relative/app")
        XCTAssertTrue(o.contains("\"crash_handler_installed\":true"), o)
        // `none` waits for start's background half, which makes the directories.
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: dataDir + "/relative/app/crashes", isDirectory: &isDirectory) && isDirectory.boolValue, o)
    }

    func testUnusableDataDirectoryWarnsAndTheAppKeepsRunning() throws {
        let o = try TestSupport.run(crasher, ["none", "--data-dir", "/proc/version/faultline"], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertTrue(o.stderr.contains("Faultline is off"), o.stderr)
    }

    // MARK: Unmodified programs

    func testPreloadLibraryReportsACrashInAnUnmodifiedCProgram() throws {
        let lib = try PreloadLibrary.path()
        let src = dataDir + "/plain.c", exe = dataDir + "/plain"
        try "#include <stdlib.h>\nint main(void) { abort(); }\n".write(toFile: src, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -g '\(src)' -o '\(exe)'")
        let o = try TestSupport.run(exe, [], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir, "FAULTLINE_RELEASE": "plain@2"])
        XCTAssertEqual(o.signal, SIGABRT, o.description)
        let r = try onlyReport()
        XCTAssertEqual(r.executable, exe)
        XCTAssertEqual(r.context["release"]?.stringValue, "plain@2")
        XCTAssertFalse(r.modules.contains { $0.path.contains("libswiftCore") }, "no Swift runtime is dragged into a C program")

        // A relative FAULTLINE_CRASH_DIR means the directory it named at start, after a chdir.
        let moves = dataDir + "/moves.c", elsewhere = dataDir + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try "#include <unistd.h>\nint main(int c, char **v) { (void)c; chdir(v[1]); *(volatile int *)16 = 1; return 0; }\n"
            .write(toFile: moves, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -g '\(moves)' -o '\(dataDir)/moves'")
        let relative = try TestSupport.shell(
            "cd '\(dataDir)' && LD_PRELOAD='\(lib)' FAULTLINE_CRASH_DIR=relative-crashes ./moves '\(elsewhere)'; echo status $?")
        XCTAssertTrue(relative.contains("status 139"), relative)
        XCTAssertEqual(TestSupport.files(in: dataDir + "/relative-crashes", suffix: ".crash.json").count, 1, relative)
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere + "/relative-crashes"))

        // Every thread of an unmodified program, too.
        let threaded = dataDir + "/threaded.c"
        try """
        #include <pthread.h>
        #include <unistd.h>
        static void *sleeper(void *arg) { (void)arg; for (;;) sleep(100); return 0; }
        int main(void) {
            pthread_t t;
            for (int i = 0; i < 3; i++) pthread_create(&t, 0, sleeper, 0);
            usleep(50000);
            *(volatile int *)16 = 1;
            return 0;
        }
        """.write(toFile: threaded, atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -g -pthread '\(threaded)' -o '\(dataDir)/threaded'")
        try FileManager.default.removeItem(atPath: crashDir)
        let t = try TestSupport.run(dataDir + "/threaded", [], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
        XCTAssertEqual(t.signal, SIGSEGV, t.description)
        let threads = try onlyReport().otherThreads
        XCTAssertEqual(threads.count, 3)
        XCTAssertTrue(threads.allSatisfy { !$0.frames.isEmpty }, "\(threads.map(\.error))")
    }

    // MARK: Signal safety

    func testCrashPathObjectsImportOnlyAsyncSignalSafeFunctions() throws {
        // Every function a crash-path object imports is on the list (CrashPathImports) or defined
        // in a crash-path object itself; data (fl_state) may live anywhere in the core. A new call
        // in the handler must either be async-signal-safe and bound at start
        // (crash_path_binding.c), or not be made. The aarch64 objects: Aarch64CrashTests.
        let objects = TestSupport.productsDirectory.appendingPathComponent("CFaultlineCrash.build").path
        let findings = try CrashPathImports.check(objectsIn: objects, nm: "nm", unwindPrefix: "_Ux86_64_")
        XCTAssertEqual(findings.missingObjects, [], "crash-path objects are where the test looks")
        XCTAssertEqual(findings.offending, [], "crash-path objects import functions that are not async-signal-safe")
        XCTAssertEqual(findings.unbound, [], "crash_path_binding.c must call these once at start")
    }
}
