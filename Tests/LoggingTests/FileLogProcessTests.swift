// The file log, stderr capture and `faultline console` with real files and real child processes.
@testable import Faultline
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class FileLogProcessTests: XCTestCase {
    let probe = TestSupport.product("faultline-log-probe")
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("logging") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func lines(_ path: String) throws -> [Substring] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    }
    /// (tag, thread) → sequence numbers in file order.
    func sequences(_ ls: [Substring]) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for l in ls {
            guard let p = LogLineFormat.parse(l) else { continue }
            let w = p.message.split(separator: " ")
            out["\(w[0]) \(w[1])", default: []].append(Int(w[2].dropFirst())!)
        }
        return out
    }

    func testTrimAtCapKeepsNewerWholeLinesOfEverySize() throws {
        let path = dir + "/nested/dir/app.log"
        let o = try TestSupport.run(probe, ["write", path, "3000", "--cap", "65536", "--tag", "one"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        let ls = try lines(path)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).intValue
        XCTAssertLessThanOrEqual(size, 65536, "trimmed below the cap")
        XCTAssertGreaterThan(size, 10_000, "kept the newer half, not nothing")
        XCTAssertTrue(ls.allSatisfy { LogLineFormat.parse($0) != nil }, "every kept line is whole")
        let seq = try XCTUnwrap(sequences(ls)["one t0"])
        XCTAssertEqual(seq.last, 2999)
        XCTAssertEqual(seq, Array(seq.first!...2999), "a contiguous newer part: cut only at line boundaries")
    }

    func testThreadsAndTwoProcessesShareOneFileWithoutTornOrLostLines() throws {
        let path = dir + "/shared.log"
        func start(_ tag: String, cap: String) throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: probe)
            p.arguments = ["write", path, "1500", "--threads", "4", "--cap", cap, "--tag", tag]
            try p.run()
            return p
        }
        // Without trimming: every line exactly once, each thread's lines in order.
        let a = try start("A", cap: "\(64 << 20)"), b = try start("B", cap: "\(64 << 20)")
        a.awaitEnd(); b.awaitEnd()
        var seq = sequences(try lines(path))
        XCTAssertEqual(seq.count, 8)
        for (k, v) in seq { XCTAssertEqual(v, Array(0..<1500), k) }
        // With trimming by both processes: whole lines only, each thread's kept lines a contiguous newer run.
        unlink(path)
        let c = try start("C", cap: "131072"), d = try start("D", cap: "131072")
        c.awaitEnd(); d.awaitEnd()
        let ls = try lines(path)
        XCTAssertTrue(ls.allSatisfy { LogLineFormat.parse($0) != nil }, "no torn line")
        seq = sequences(ls)
        XCTAssertFalse(seq.isEmpty)
        for (k, v) in seq { XCTAssertEqual(v, Array(v.first!...1499), "\(k): nothing lost after the cut") }
    }

    func testKillDashNineDuringTrimLeavesOldOrNewFile() throws {
        let path = dir + "/killed.log"
        for round in 0..<12 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: probe)
            p.arguments = ["loop", path, "--cap", "65536"]
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(100_000 + round * 37_000))
            p.end(with: SIGKILL)
            let ls = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            // Only the line being written at the kill may be short; everything before it is whole.
            XCTAssertTrue(ls.dropLast().allSatisfy { LogLineFormat.parse($0) != nil }, "round \(round)")
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).intValue
            // Killed between a batch's append and its trim, the file holds the cap plus at most
            // that batch, which is at most the queue (FileLogger.Configuration.queueBytes).
            XCTAssertLessThanOrEqual(size, 65536 + FileLogger.Configuration(path: path).queueBytes, "round \(round)")
        }
        _ = try FileLogger(path: path)  // opening removes a dead trimmer's temporary
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testQueuedLinesReachTheFileWhenTheProcessCrashes() throws {
        let path = dir + "/crash.log"
        let o = try TestSupport.run(probe, ["async-then-crash", path, "2000", dir + "/data"], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let messages = Set(try lines(path).compactMap { LogLineFormat.parse($0)?.message })
        XCTAssertEqual(messages, Set((0..<2000).map { "queued \($0)" }), "the crash flushed the queue")
    }

    func testFullDiskIsReportedOnceAndLoggingResumes() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let mnt = dir + "/tiny"
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        _ = try TestSupport.shell("mount -t tmpfs -o size=256k tmpfs '\(mnt)'")
        defer { _ = try? TestSupport.shell("umount '\(mnt)'") }
        let errPath = dir + "/stderr.txt"
        let saved = dup(2)
        let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        dup2(errFD, 2)
        let log = try FileLogger(path: mnt + "/app.log", maximumBytes: 16 << 20)
        for i in 0..<2000 { log.error("filling \(i) " + String(repeating: "z", count: 200)) }
        let dropped = log.droppedLines
        unlink(mnt + "/app.log")  // space returns (the logger reopens the path it no longer sees)
        log.error("after space returned")
        log.close()
        dup2(saved, 2); close(saved); close(errFD)
        XCTAssertGreaterThan(dropped, 0)
        let err = try String(contentsOfFile: errPath, encoding: .utf8)
        XCTAssertEqual(err.components(separatedBy: "cannot write the file log").count - 1, 1, err)
        let text = try String(contentsOfFile: mnt + "/app.log", encoding: .utf8)
        XCTAssertTrue(text.contains("log lines were dropped"), text)
        XCTAssertTrue(text.contains("after space returned"))
    }

    func testStderrOfACrashingChildIsTeedAndItsTailIsInTheReport() throws {
        let data = dir + "/data"
        let o = try TestSupport.run(probe, ["stderr-crash", data], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        XCTAssertTrue(o.stderr.contains("written by C stdio before the crash"), "still reaches the original stderr")
        XCTAssertTrue(o.stderr.contains("written by Swift FileHandle before the crash"))
        XCTAssertTrue(o.stderr.contains("the last line before the crash"))
        let captured = try String(contentsOfFile: data + "/stderr.log", encoding: .utf8)
        XCTAssertTrue(captured.contains("written by C stdio") && captured.contains("written by Swift FileHandle"))
        let report = try XCTUnwrap(TestSupport.files(in: data + "/crashes", suffix: ".crash.json").first)
        let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: report)))
        let tail = try XCTUnwrap(r.stderrTail)
        XCTAssertTrue(tail.text.hasSuffix("the last line before the crash\n"), String(tail.text.suffix(200)))
        XCTAssertFalse(tail.text.contains("filler line 0 "), "older bytes left the 16 KiB ring")
        XCTAssertLessThanOrEqual(tail.text.utf8.count, 16384 + 65536)
        // Exactly what the probe wrote to fd 2 (see its stderr-crash mode), counted also when the
        // capture thread reads more than the ring holds in one chunk.
        let written =
            ["written by C stdio before the crash\n", "written by Swift FileHandle before the crash\n"]
            + (0..<2000).map { "filler line \($0) to push old bytes out of the 16 KiB tail\n" } + ["the last line before the crash\n"]
        XCTAssertEqual(tail.totalBytes, written.reduce(0) { $0 + $1.utf8.count }, "total_bytes counts every byte written")
        XCTAssertEqual(captured, written.joined(), "stderr.log has every byte, also those the crash drained from the pipe")
        let event = CrashEvent.make(from: r)
        XCTAssertEqual(event["contexts"]?["stderr"]?["tail"]?.stringValue, tail.text)
        let sym = try TestSupport.run(TestSupport.product("faultline"), ["symbolicate", report])
        XCTAssertTrue(sym.stdout.contains("stderr (last"), sym.description)
        XCTAssertTrue(sym.stdout.contains("the last line before the crash"))
    }

    /// A child forked while another thread was inside Log.* (breadcrumb ring locked) logs and
    /// exits, with or without the crash core started (its fork handler used to be registered only
    /// by a successful start, so the child's first log line could wait for ever).
    func testAForkedChildCanLogWhileTheParentLogs() throws {
        let r = try TestSupport.run(probe, ["log-fork", "300"], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, "\(r)")
        XCTAssertTrue(r.stdout.contains("forked 300"), "\(r)")
    }

    func testStderrCaptureWithClosedStderrAndAcrossFork() throws {
        let closed = try TestSupport.run(probe, ["stderr-closed", dir + "/closed"], timeout: 20)
        XCTAssertEqual(closed.exitCode, 0, closed.description)
        XCTAssertTrue(try String(contentsOfFile: dir + "/closed/stderr.log", encoding: .utf8).contains("written to a closed stderr"))
        let forked = try TestSupport.run(probe, ["stderr-fork", dir + "/fork"], timeout: 20)
        XCTAssertEqual(forked.exitCode, 0, forked.description)
        XCTAssertTrue(forked.stderr.contains("child line 4999\n"), "the child's output is not lost")
        XCTAssertTrue(forked.stderr.contains("parent after fork, child status 0"))
        XCTAssertTrue(try String(contentsOfFile: dir + "/fork/stderr.log", encoding: .utf8).contains("parent after fork"))
    }

    func testJournalDatagramCarriesStructuredFields() throws {
        let sock = dir + "/journal.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(sock.utf8)) }
        XCTAssertEqual(
            withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }, 0
        )
        let o = try TestSupport.run(probe, ["journal", sock])
        XCTAssertEqual(o.exitCode, 0, o.description)
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buf, buf.count, Int32(MSG_DONTWAIT))
        XCTAssertGreaterThan(n, 0)
        let d = Array(buf[..<max(0, n)])
        let text = String(decoding: d, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("MESSAGE\n"), "multi-line message in binary form")
        XCTAssertEqual(Array(d[8..<16]), [24, 0, 0, 0, 0, 0, 0, 0], "little-endian length of 'journal line\\nsecond line'")
        for field in [
            "PRIORITY=4\n", "SYSLOG_IDENTIFIER=faultline-log-probe\n", "CODE_FILE=faultline_log_probe/main.swift\n",
            "FAULTLINE_ATTR_ORDER_ID=A-7\n", "FAULTLINE_ATTR_TRIES=3\n", "FAULTLINE_SUBSYSTEM=dev.faultline\n"
        ] {
            XCTAssertTrue(text.contains(field), field)
        }
    }

    func testJournalctlShowsTheFields() throws {
        guard JournalLogger.isAvailable else {
            throw XCTSkip("no systemd journal on this machine (\(JournalLogger.defaultSocket) is absent); the datagram test covers the wire format")
        }
        let tag = "faultline-test-\(getpid())"
        JournalLogger(identifier: tag).warning("journal test line", attributes: ["order.id": "A-7"])
        sleep(1)
        let out = try TestSupport.shell("journalctl -o verbose SYSLOG_IDENTIFIER=\(tag) --no-pager")
        XCTAssertTrue(out.contains("FAULTLINE_ATTR_ORDER_ID=A-7") && out.contains("PRIORITY=4") && out.contains("CODE_LINE="), out)
    }
}
