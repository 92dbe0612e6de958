// A handler an app installs after Faultline's may call ours as the handler it replaced, but as a
// plain function: Ruby's VM prints its own report, calls the old handler as f(signo), then
// aborts. Our siginfo and context arguments are then whatever the registers held. The handler must
// not fault on them (it did: the kernel killed the process with SIGSEGV and no report), the report
// must still be written, walking from where the call came in down to where the signal struck, and
// the process must die as it does without Faultline.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class PlainCallChainTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("plain-call-chain") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testAHandlerCalledWithoutDetailsStillReportsAndTheProcessDiesAsItWould() throws {
        let root = TestSupport.repositoryRoot().path
        let lib = try PreloadLibrary.path()
        let program = dir + "/plain_call_chain"
        _ = try TestSupport.shell("cc -g -O1 '\(root)/Fixtures/CrashPrograms/plain_call_chain.c' -o '\(program)'")
        for mode in ["null", "garbage"] {
            let without = try TestSupport.run(program, [mode])
            XCTAssertEqual(without.signal, SIGABRT, "\(mode), without Faultline: \(without)")
            try? FileManager.default.removeItem(atPath: crashDir)
            let with = try TestSupport.run(program, [mode], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
            XCTAssertEqual(with.signal, without.signal, "\(mode): dies as it would have: \(with)")
            XCTAssertTrue(with.stderr.contains("[BUG] Segmentation fault"), "the app's own report still runs: \(with.stderr)")
            let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
            XCTAssertEqual(reports.count, 1, "\(mode): one report, of the fault, not of the abort that ends it")
            guard let path = reports.first else { continue }
            let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
            XCTAssertEqual(r.signal.number, Int(SIGSEGV), mode)
            XCTAssertTrue(r.signal.codeName.hasPrefix("no details"), "\(mode): \(r.signal.codeName)")
            // The walk goes from the call through the app's handler and the signal frame to the
            // fault, which is an interrupted instruction, not a return address.
            let symbols = try TestSupport.shell("nm '\(program)'")
            func start(_ name: String) -> UInt64? {
                symbols.split(separator: "\n").first { $0.hasSuffix(" \(name)") }.flatMap { UInt64($0.split(separator: " ")[0], radix: 16) }
            }
            let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable })
            let offsets = r.frames.filter { exe.contains($0.address) }.map { ($0.address.value - exe.base.value, $0.isReturnAddress) }
            let handler = try XCTUnwrap(start("app_handler")), fault = try XCTUnwrap(start("fault_here"))
            XCTAssertTrue(offsets.contains { $0.0 >= handler && $0.0 < handler + 64 }, "\(mode): the app's handler is on the stack: \(offsets)")
            XCTAssertTrue(offsets.contains { $0.0 == fault && !$0.1 }, "\(mode): fault_here's first instruction, as a pc: \(offsets)")
        }
    }
}
