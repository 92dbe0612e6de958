// A thread that calls exit() while another thread's crash is being reported ended the process
// before the report was written, with exit's status 0 instead of the crash's SIGSEGV: crashes
// racing shutdown (a worker faulting while static destructors run) vanished. exit() now waits
// for the report (CFaultlineCrash/handler.c, fl_hold_exit_while_crashing).
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class ExitDuringCrashTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("exit-during-crash") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testAnExitDuringACrashWaitsForTheReportAndTheProcessDiesByTheCrash() throws {
        let root = TestSupport.repositoryRoot().path
        let lib = try PreloadLibrary.path()
        let program = dir + "/exit_during_crash"
        _ = try TestSupport.shell("cc -g -O1 -pthread '\(root)/Fixtures/CrashPrograms/exit_during_crash.c' -o '\(program)'")
        // The program exits once the crash directory has a file: the handler's report under way.
        for run in 1...5 {
            try? FileManager.default.removeItem(atPath: crashDir)
            try FileManager.default.createDirectory(atPath: crashDir, withIntermediateDirectories: true)
            let with = try TestSupport.run(program, [crashDir], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
            XCTAssertEqual(with.signal, SIGSEGV, "run \(run): dies by the crash, not by exit(0): \(with)")
            let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
            XCTAssertEqual(reports.count, 1, "run \(run)")
            guard let path = reports.first else { continue }
            let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
            XCTAssertEqual(r.signal.number, Int(SIGSEGV))
            XCTAssertFalse(r.otherThreads.isEmpty, "run \(run): the whole report, with the main thread, was written")
        }
    }
}
