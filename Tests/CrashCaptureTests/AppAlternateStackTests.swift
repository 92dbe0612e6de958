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

    func testSmallAppAlternateStacksStillGiveAReportForOverflowsAndFaultsOnAnyThread() throws {
        let root = TestSupport.repositoryRoot().path
        let lib = try TestSupport.shell("'\(root)/tools/build-preload' '\(dir)/preload'").trimmingCharacters(in: .whitespacesAndNewlines)
        let program = dir + "/own_altstack"
        _ = try TestSupport.shell("cc -g -O1 -pthread '\(root)/Fixtures/CrashPrograms/own_altstack.c' -o '\(program)'")
        // 2 KiB (MINSIGSTKSZ) where the kernel can deliver onto it; here and on every CPU, the
        // smallest stack the kernel delivers to plus 256 bytes; and 4 KiB.
        var sizes = [max(Int(MINSIGSTKSZ), Self.kernelSignalFrameBytes + 256), 4096]
        if Self.kernelSignalFrameBytes + 256 <= 2048 { sizes.insert(2048, at: 0) }
        for size in sizes {
            for how in ["overflow", "fault"] {
                for thread in ["main", "thread"] {
                    let label = "\(size) bytes, \(how) on the \(thread) thread"
                    try? FileManager.default.removeItem(atPath: crashDir)
                    let o = try TestSupport.run(program, [String(size), how, thread], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
                    XCTAssertEqual(o.signal, SIGSEGV, "\(label): dies as it would have: \(o)")
                    let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
                    XCTAssertEqual(reports.count, 1, "\(label): a report (the program: \(o))")
                    guard let path = reports.first else { continue }
                    let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
                    XCTAssertEqual(r.signal.number, Int(SIGSEGV), label)
                    XCTAssertEqual(r.stackOverflow, how == "overflow", label)
                    let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable }, label)
                    XCTAssertGreaterThan(
                        r.frames.filter { exe.contains($0.address) }.count, how == "overflow" ? 100 : 2,
                        "\(label): the walk goes through the program's own frames")
                }
            }
        }
    }
}
