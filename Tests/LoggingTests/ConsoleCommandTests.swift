// `faultline console` following a file log while it is trimmed, driven through a pseudo-terminal.
@testable import Faultline
import FaultlineTestSupport
import Foundation
import XCTest

final class ConsoleCommandTests: XCTestCase {
    func testFollowsThroughTrimsInAPtyWithColourAndExitsOnCtrlC() throws {
        let dir = TestSupport.makeTemporaryDirectory("console")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/app.log"
        let log = try FileLogger(path: path, maximumBytes: 16384)
        log.info("before start")
        // python's pty module runs the console on a real terminal, then sends Ctrl-C through it.
        let script = """
            import os, pty, sys, time, select
            pid, fd = pty.fork()
            if pid == 0:
                os.environ.pop("NO_COLOR", None)
                os.execv(sys.argv[1], [sys.argv[1], "console", sys.argv[2], "--level", "info"])
            out = b""
            deadline = time.time() + 30
            while time.time() < deadline:
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try: chunk = os.read(fd, 65536)
                    except OSError: break
                    out += chunk
                    if b"before start" in out and not os.path.exists(sys.argv[4]): open(sys.argv[4], "w").close()
                if os.path.exists(sys.argv[3]) and b"line 399 " in out: break
            os.write(fd, b"\\x03")
            end = time.time() + 5
            while time.time() < end:
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try: out += os.read(fd, 65536)
                    except OSError: break
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(out)
            sys.stderr.write("status=%d" % status)
            """
        try script.write(toFile: dir + "/drive.py", atomically: true, encoding: .utf8)
        let done = dir + "/done", ready = dir + "/ready"
        let driver = Process()
        driver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        driver.arguments = ["python3", dir + "/drive.py", TestSupport.product("faultline"), path, done, ready]
        let out = Pipe(), err = Pipe()
        driver.standardOutput = out
        driver.standardError = err
        try driver.run()
        // Write only once the console shows the line logged before it started: on a loaded machine
        // python and the console can take longer than any fixed sleep, and a console that starts
        // late rightly shows only the last 10 lines.
        let readyBy = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: ready) && Date() < readyBy { usleep(20_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: ready), "the console showed the existing line")
        for i in 0..<400 {
            log.debug("hidden \(i)")
            log.info("line \(i) " + String(repeating: "p", count: i % 90))
            if i % 20 == 0 { log.flush(); usleep(80_000) }
        }
        log.close()
        FileManager.default.createFile(atPath: done, contents: nil)
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        driver.awaitEnd()
        let status = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(status, "status=0", "exits cleanly on Ctrl-C")
        XCTAssertTrue(text.contains("\u{1B}["), "coloured on a terminal")
        XCTAssertFalse(text.contains("hidden"), "--level info drops debug lines")
        // The terminal turns each "\n" into "\r\n" (ONLCR), and Swift treats "\r\n" as one
        // Character, so splitting on "\n" alone would leave the whole output as one line.
        let shown = text.split(whereSeparator: \.isNewline).compactMap { l -> Int? in
            guard let r = l.range(of: #"line (\d+) "#, options: .regularExpression) else { return nil }
            return Int(l[r].dropFirst(5).dropLast())
        }
        XCTAssertEqual(shown, Array(0..<400), "every line once, in order, across trims")
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).intValue
        XCTAssertLessThanOrEqual(size, 16384, "the file was trimmed meanwhile")
    }

    func testExitsWhenStdoutIsAClosedPipe() throws {
        let dir = TestSupport.makeTemporaryDirectory("console")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/app.log"
        let log = try FileLogger(path: path)
        log.error("first")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.product("faultline"))
        p.arguments = ["console", path]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        usleep(300_000)
        try pipe.fileHandleForReading.close()
        for i in 0..<20 { log.error("more \(i)"); usleep(20_000) }
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(p.isRunning, "console must end when nobody reads its output")
        if p.isRunning { p.terminate() }
        XCTAssertEqual(p.awaitEnd(), ProcessEnd(exitCode: 0, signal: nil))
    }
}
