// `stack_overflow` (and the event's "stack overflow:" title) was said of any SIGSEGV within
// 64 KiB of the stack pointer: a stack pointer set to garbage and a call into the (non-executable)
// stack were "stack overflows" too. A fault is one only when it is not the fetch of an instruction
// and the page above it is mapped: the stack the guard page protects (report_writer.c).
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class StackOverflowClassificationTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("not-an-overflow") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testAWildStackPointerAndACallIntoTheStackAreNoOverflow() throws {
        #if arch(x86_64)
            let root = TestSupport.repositoryRoot().path
            let lib = try PreloadLibrary.path()
            let program = dir + "/not_an_overflow"
            _ = try TestSupport.shell("cc -g -O1 '\(root)/Fixtures/CrashPrograms/not_an_overflow.c' -o '\(program)'")
            for mode in ["bad-sp", "stack-code"] {
                try? FileManager.default.removeItem(atPath: crashDir)
                let o = try TestSupport.run(program, [mode], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
                XCTAssertEqual(o.signal, SIGSEGV, "\(mode): \(o)")
                let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
                XCTAssertEqual(reports.count, 1, mode)
                guard let path = reports.first else { continue }
                let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
                XCTAssertFalse(r.stackOverflow, "\(mode): no stack overflow")
            }
        #endif
    }
}
