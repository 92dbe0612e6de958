// An app's SIGSEGV handler installed before Faultline's is chained to; a common one logs and then
// ends the process itself (exit, abort) instead of returning to Faultline. The crashing thread's
// report was on disk, but the other threads' stacks were never added: the report had no threads
// at all. They are now added before the app's handler ends the process (CFaultlineCrash/handler.c,
// fl_add_all_threads_before_the_chained_end), and the process still dies as the app's handler
// makes it.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class ChainedHandlerEndsTests: XCTestCase {
    var dir = ""
    var crashDir: String { dir + "/crashes" }

    override func setUp() { dir = TestSupport.makeTemporaryDirectory("chained-handler-ends") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testTheReportHasEveryThreadWhenTheAppsHandlerEndsTheProcess() throws {
        let root = TestSupport.repositoryRoot().path
        let lib = try PreloadLibrary.path()
        let source = "\(root)/Fixtures/CrashPrograms/chained_handler_ends.c"
        _ = try TestSupport.shell(
            "cd '\(dir)' && cc -g -O1 -DAPP_HANDLER_LIBRARY -shared -fPIC '\(source)' -o libapphandler.so && "
                + "cc -g -O1 -pthread '\(source)' -L. -Wl,--no-as-needed -lapphandler -Wl,-rpath,'\(dir)' -o chained_handler_ends")
        let program = dir + "/chained_handler_ends"
        for mode in ["exit", "abort"] {
            let without = try TestSupport.run(program, [mode])
            XCTAssertEqual(mode == "exit" ? without.exitCode : without.signal, mode == "exit" ? 77 : SIGABRT, "\(mode) without Faultline: \(without)")
            try? FileManager.default.removeItem(atPath: crashDir)
            let with = try TestSupport.run(program, [mode], environment: ["LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir])
            XCTAssertEqual(with.exitCode, without.exitCode, "\(mode): dies as the app's handler makes it: \(with)")
            XCTAssertEqual(with.signal, without.signal, "\(mode): dies as the app's handler makes it: \(with)")
            XCTAssertTrue(with.stderr.contains("app handler: giving up"), "the app's handler ran: \(with.stderr)")
            let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
            XCTAssertEqual(reports.count, 1, mode)
            guard let path = reports.first else { continue }
            let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
            XCTAssertEqual(r.signal.number, Int(SIGSEGV), "\(mode): the report is the fault's")
            let workers = r.otherThreads.filter { $0.name == "worker" }
            XCTAssertEqual(workers.count, 3, "\(mode): every other thread is in the report: \(r.otherThreads.map(\.name))")
        }
    }
}
