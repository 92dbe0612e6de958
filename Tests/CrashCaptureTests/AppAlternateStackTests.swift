// An app that installs its own small alternate signal stack after Faultline started (as language
// runtimes do for their own stack-overflow detection) still gets a report: the handler moves to a
// stack of its own before it needs more than a few hundred bytes (handler_stack.c).
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class AppAlternateStackTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("altstack") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// The kernel's own minimum for a signal frame on this CPU (AT_MINSIGSTKSZ: 3376 bytes with
    /// AVX-512). Below it no handler of anyone's can run on that stack: the kernel kills the
    /// process with SIGSEGV before any user code, with or without Faultline.
    static var kernelSignalFrameBytes: Int {
        // The auxiliary vector: (type, value) pairs of 64-bit words; AT_MINSIGSTKSZ is 51.
        let words = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/self/auxv")))?.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) } ?? []
        for i in stride(from: 0, to: words.count - 1, by: 2) where words[i] == 51 { return Int(words[i + 1]) }
        return Int(MINSIGSTKSZ)
    }

    /// 2 KiB (MINSIGSTKSZ) where the kernel can deliver onto it; here and on every CPU, the
    /// smallest stack the kernel delivers to plus 256 bytes; and 4 KiB.
    static var smallStackSizes: [Int] {
        var sizes = [max(Int(MINSIGSTKSZ), kernelSignalFrameBytes + 256), 4096]
        if kernelSignalFrameBytes + 256 <= 2048 { sizes.insert(2048, at: 0) }
        return sizes
    }

    func testSmallAppAlternateStacksStillGiveAReportForOverflowsAndFaultsOnAnyThread() throws {
        let (program, lib) = try buildProgramAndPreload()
        for size in Self.smallStackSizes {
            for how in ["overflow", "fault"] {
                for thread in ["main", "thread"] {
                    try crashGivesAReport(program, lib, [String(size), how, thread], label: "\(size) bytes, \(how) on the \(thread) thread")
                }
            }
        }
    }

    /// A signal delivered as the handler is entered nests on the small stack the handler entered
    /// on; its frame does not fit there and the kernel kills the process before any handler runs,
    /// unless the handler blocks it until it has moved. Here an app signal arrives as fast as
    /// another thread can send it; in the wild it is a profiler's tick or a supervisor's signal.
    /// The same runs cover Faultline's own catch-up signal (thread_setup.c), which must not reach
    /// a thread the pthread_create wrapper started while its app handler runs on its small stack.
    /// How often each half of the fix was needed: docs/CRASH-HANDLER.md.
    func testSignalsArrivingAsTheHandlerIsEnteredOnASmallStackDoNotCostTheReport() throws {
        let (program, lib) = try buildProgramAndPreload()
        for size in Self.smallStackSizes {
            for how in ["overflow", "fault"] {
                for thread in ["main", "thread"] {
                    for attempt in 1...3 {
                        try crashGivesAReport(
                            program, lib, [String(size), how, thread, "signals"],
                            label: "\(size) bytes, \(how) on the \(thread) thread, signals arriving (run \(attempt))")
                    }
                }
            }
        }
    }

    /// The crash asks every other thread for its stack with a signal whose handler runs on that
    /// thread's alternate stack: a thread parked with the app's small one still answers there,
    /// and the process still dies by the crashing thread's signal.
    func testAThreadWithASmallAppAlternateStackStillGivesItsStackToAnotherThreadsCrash() throws {
        let (program, lib) = try buildProgramAndPreload()
        for size in Self.smallStackSizes {
            let label = "\(size) bytes on a parked thread, abort on main"
            guard let r = try crashReport(program, lib, [String(size), "beside"], dyingBy: SIGABRT, label: label) else { continue }
            let parked = try XCTUnwrap(r.otherThreads.first { $0.name == "small-stack" }, "\(label): the parked thread is listed")
            XCTAssertNil(parked.error, label)
            let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable }, label)
            XCTAssertGreaterThanOrEqual(parked.frames.filter { exe.contains($0.address) }.count, 2, "\(label): its stack reaches the program's frames")
        }
    }

    private func buildProgramAndPreload() throws -> (program: String, lib: String) {
        let root = TestSupport.repositoryRoot().path
        let lib = try PreloadLibrary.path()
        let program = dir + "/own_altstack"
        _ = try TestSupport.shell("cc -g -O1 -pthread '\(root)/Fixtures/CrashPrograms/own_altstack.c' -o '\(program)'")
        return (program, lib)
    }

    /// Runs the program under the preload library; checks it died by `signal` with exactly one
    /// report of that signal, and gives the report (nil when there was none to read).
    private func crashReport(_ program: String, _ lib: String, _ arguments: [String], dyingBy signal: Int32, label: String) throws -> CrashReport? {
        try? FileManager.default.removeItem(atPath: crashDir)
        let o = try TestSupport.run(program, arguments, environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
        XCTAssertEqual(o.signal, signal, "\(label): dies as it would have: \(o)")
        let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1, "\(label): a report (the program: \(o))")
        guard let path = reports.first else { return nil }
        let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(r.signal.number, Int(signal), label)
        return r
    }

    private func crashGivesAReport(_ program: String, _ lib: String, _ arguments: [String], label: String) throws {
        let how = arguments[1]
        guard let r = try crashReport(program, lib, arguments, dyingBy: SIGSEGV, label: label) else { return }
        XCTAssertEqual(r.stackOverflow, how == "overflow", label)
        let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable }, label)
        XCTAssertGreaterThan(
            r.frames.filter { exe.contains($0.address) }.count, how == "overflow" ? 100 : 2,
            "\(label): the walk goes through the program's own frames (unwind stopped by \(r.unwindStoppedBy), fallback \(r.unwindFallback ?? "none"))")
    }
}
