// Starting Faultline changes nothing an app sees: a signal sent to the process is never taken by
// start's own thread (a daemon's SIGTERM awaited with sigwait once killed it; a handler ran there
// while the thread waiting for it waited on), an unmodified program under the preload reaches
// main single-threaded (a user namespace needs that), and threads waiting in sleeps and polls
// when start comes are not interrupted by its catch-up signal. Real programs, built at test time.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class StartLeavesTheAppAloneTests: XCTestCase {
    private var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("faultline-start-alone") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    private func buildLinkedProgram() throws -> String {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CrashPrograms/start_leaves_app_alone.c").path
        let program = dir + "/start_leaves_app_alone"
        _ = try TestSupport.shell(
            "cc -g -O1 -pthread -I '\(PreloadLibrary.headerDirectory)' '\(source)' \(try PreloadLibrary.staticCoreLinkArguments()) -o '\(program)'")
        return program
    }

    func testASignalSentToTheProcessIsTheAppsWhileStartsThreadLives() throws {
        let program = try buildLinkedProgram()
        let r = try TestSupport.run(program, ["signals", dir + "/crashes"])
        XCTAssertNil(r.signal, "the SIGTERM the main thread awaits did not end the process: \(r)")
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertTrue(r.stdout.contains("sigwait 15"), r.description)
        XCTAssertTrue(r.stdout.contains("handler on main"), r.description)
    }

    func testThreadsWaitingInSleepsAndPollsAreNotInterruptedByStart() throws {
        let program = try buildLinkedProgram()
        let r = try TestSupport.run(program, ["waits", dir + "/crashes"])
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertTrue(r.stdout.contains("nanosleep slept"), r.description)
        XCTAssertTrue(r.stdout.contains("epoll_wait timed out"), r.description)
    }

    /// A walk the watchdog cuts short (a deep overflow's walk on a loaded machine) keeps the
    /// frames libunwind walked so far when they are more than frame pointers give: they were
    /// thrown away for a frame-pointer walk, one frame in code built without them.
    func testAWalkTheWatchdogCutsShortKeepsTheLongerWalk() throws {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CrashPrograms/deep_overflow.c").path
        let program = dir + "/deep_overflow"
        _ = try TestSupport.shell(
            "cc -g -O1 -fomit-frame-pointer -pthread -I '\(PreloadLibrary.headerDirectory)' '\(source)' \(try PreloadLibrary.staticCoreLinkArguments()) -o '\(program)'"
        )
        // A 64 MiB stack: its walk is capped at 500,000 steps, far more than libunwind walks in the
        // watchdog's 50 ms even on a fast idle machine, and the 50 ms leave room for a busy one
        // to be late entering the handler before the walk begins.
        let o = try TestSupport.run("/bin/sh", ["-c", "ulimit -s 65536 2>/dev/null; exec '\(program)' '\(dir)/crashes' 50"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let path = try XCTUnwrap(TestSupport.files(in: dir + "/crashes", suffix: ".crash.json").first, o.description)
        let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertTrue(r.stackOverflow)
        XCTAssertEqual(r.unwindStoppedBy, "watchdog", "the walk was cut short")
        XCTAssertEqual(r.unwindMethod, "libunwind")
        XCTAssertGreaterThan(r.frames.count, 100, "the frames libunwind walked before the watchdog")
    }

    func testAnUnmodifiedProgramReachesMainSingleThreadedUnderThePreload() throws {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CrashPrograms/thread_count.c").path
        let program = dir + "/thread_count"
        _ = try TestSupport.shell("cc -O1 '\(source)' -o '\(program)'")
        let env = ["LD_PRELOAD": try PreloadLibrary.path(), "FAULTLINE_CRASH_DIR": dir + "/crashes"]
        // The preparation's thread, when there was one, lived a millisecond or so: several runs.
        for run in 0..<20 {
            let r = try TestSupport.run(program, [], environment: env)
            XCTAssertTrue(r.stdout.contains("Threads:\t1\n"), "run \(run): \(r)")
        }
        // Where this machine lets a process enter a user namespace, the preload does too.
        let bare = try TestSupport.run(program, ["unshare"])
        if bare.stdout.contains("unshare ok") {
            let preloaded = try TestSupport.run(program, ["unshare"], environment: env)
            XCTAssertTrue(preloaded.stdout.contains("unshare ok"), preloaded.description)
        } else {
            print("user namespaces are not allowed here (\(bare.stdout.trimmingCharacters(in: .newlines))): the unshare half not checked")
        }
    }
}
