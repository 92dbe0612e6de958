// A seccomp filter that kills the process (or traps) for a system call it does not allow —
// systemd's SystemCallFilter=, a sandbox — made the crash handler's first process_vm_readv end
// the process by SIGSYS with no report, instead of the crash's SIGSEGV. The handler now asks the
// kernel to copy nothing under a filter (CFaultlineCrash/module_scan.c, fl_note_syscall_filter)
// and knows a kernel-delivered signal without asking (handler_stack.c).
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class SyscallFilterTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("syscall-filter") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testAFilterThatKillsForProcessVMReadvLeavesTheCrashAsItWasWithItsReport() throws {
        let root = TestSupport.repositoryRoot().path
        let lib = try PreloadLibrary.path()
        let program = dir + "/seccomp_filtered"
        _ = try TestSupport.shell("cc -g -O1 '\(root)/Fixtures/CrashPrograms/seccomp_filtered.c' -o '\(program)'")
        for when in ["after-start", "before-start"] {
            for action in ["kill", "trap"] {
                let what = "\(when) \(action)"
                let without = try TestSupport.run(program, [when, action])
                XCTAssertEqual(without.signal, SIGSEGV, "\(what), without Faultline: \(without)")
                try? FileManager.default.removeItem(atPath: crashDir)
                let with = try TestSupport.run(program, [when, action], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
                XCTAssertEqual(with.signal, SIGSEGV, "\(what): dies by the crash, not by SIGSYS: \(with)")
                let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
                XCTAssertEqual(reports.count, 1, what)
                guard let path = reports.first else { continue }
                let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
                XCTAssertEqual(r.signal.number, Int(SIGSEGV), what)
                let exe = try XCTUnwrap(r.modules.first { $0.path == r.executable }, "\(what): \(r.modules.map(\.path))")
                XCTAssertNotNil(exe.buildID, "\(what): build-ids read through the pipe instead")
                XCTAssertTrue(r.frames.contains { exe.contains($0.address) }, "\(what): the program's frames are in the walk")
            }
        }
    }
}
