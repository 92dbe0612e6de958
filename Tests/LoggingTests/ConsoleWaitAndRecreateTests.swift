// `faultline console` like `tail -F`: a file that does not exist yet is waited for, and a file
// deleted and created anew is shown from its start without a false "trimmed away" note.
@testable import Faultline
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

final class ConsoleWaitAndRecreateTests: XCTestCase {
    /// Collects what a pipe delivers, for polling with a deadline.
    final class Collected: Sendable {
        private let bytes = Mutex(Data())
        init(_ pipe: Pipe) {
            pipe.fileHandleForReading.readabilityHandler = { [self] h in
                let d = h.availableData
                bytes.withLock { $0.append(d) }
            }
        }
        var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
        func waitFor(_ needle: String, seconds: Double = 20) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !text.contains(needle) && Date() < deadline { usleep(20_000) }
            return text.contains(needle)
        }
    }

    func testWaitsForAMissingFileAndFollowsItAcrossARecreationWithoutAGapNote() throws {
        let dir = TestSupport.makeTemporaryDirectory("console-wait")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/later.log"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.product("faultline"))
        p.arguments = ["console", path, "--color", "never"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let shown = Collected(out), said = Collected(err)
        try p.run()
        XCTAssertTrue(said.waitFor("does not exist yet; waiting for it"), said.text)
        XCTAssertTrue(p.isRunning, "still waiting, like tail -F")

        var log = try FileLogger(path: path)
        for i in 0..<5 { log.error("first file \(i)") }
        XCTAssertTrue(shown.waitFor("first file 4"), shown.text)
        log.close()

        // Deleted and written anew (not a trim: the writer counted no trim).
        unlink(path)
        log = try FileLogger(path: path)
        for i in 0..<5 { log.error("second file \(i)") }
        XCTAssertTrue(shown.waitFor("second file 4"), shown.text)
        log.close()

        kill(p.processIdentifier, SIGTERM)
        XCTAssertEqual(p.awaitEnd(), ProcessEnd(exitCode: 0, signal: nil))
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
        let lines = shown.text.split(separator: "\n").compactMap { l -> String? in
            guard let r = l.range(of: #"(first|second) file \d"#, options: .regularExpression) else { return nil }
            return String(l[r])
        }
        XCTAssertEqual(lines, (0..<5).map { "first file \($0)" } + (0..<5).map { "second file \($0)" }, shown.text)
        XCTAssertFalse(shown.text.contains("trimmed away"), "a recreated file is not a trim: \(shown.text)")
    }

    func testFollowsACompactionInPlaceOnAFullDiskWithoutRepeatingOrLosingALine() throws {
        let dir = TestSupport.makeTemporaryDirectory("console-full")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let mnt = dir + "/tiny"
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        guard getuid() == 0, (try? TestSupport.shell("mount -t tmpfs -o size=300k tmpfs '\(mnt)'")) != nil else {
            throw XCTSkip("mounting a small tmpfs is not permitted here")
        }
        defer { _ = try? TestSupport.shell("umount '\(mnt)'") }
        let path = mnt + "/app.log"
        let log = try FileLogger(path: path, maximumBytes: 16384)
        log.error("line 0")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.product("faultline"))
        p.arguments = ["console", path, "--color", "never"]
        let out = Pipe()
        p.standardOutput = out
        let shown = Collected(out)
        try p.run()
        XCTAssertTrue(shown.waitFor("line 0 "), shown.text)
        // Up to just under the cap, then the disk fills up: each trim from now on compacts in
        // place (its copy cannot be written).
        var next = 1
        var st = stat()
        while stat(path, &st) == 0 && st.st_size < 16384 - 300 && next < 1000 {
            log.error("line \(next) " + String(repeating: "c", count: 100))
            next += 1
        }
        XCTAssertTrue(shown.waitFor("line \(next - 1) "), shown.text)
        let filler = open(mnt + "/filler", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 0x2E, count: 512)
        for _ in 0..<2000 where block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        let trims = LogTrimCount.read(forFile: path)
        for i in next..<300 {
            log.error("line \(i) " + String(repeating: "c", count: 100))
            // Paced by what the console showed (a trim comes every ~25 lines), so no two trims
            // fall between two of its polls.
            if i % 10 == 0 { XCTAssertTrue(shown.waitFor("line \(i) "), shown.text) }
        }
        XCTAssertTrue(shown.waitFor("line 299 "), shown.text)
        XCTAssertGreaterThan(LogTrimCount.read(forFile: path), trims, "trimmed meanwhile")
        XCTAssertEqual(log.droppedLines, 0, "a compaction frees what the next lines need")
        log.close()
        kill(p.processIdentifier, SIGTERM)
        XCTAssertEqual(p.awaitEnd(), ProcessEnd(exitCode: 0, signal: nil))
        out.fileHandleForReading.readabilityHandler = nil
        let numbers = shown.text.split(separator: "\n").compactMap { l -> Int? in
            guard let r = l.range(of: #"line \d+ "#, options: .regularExpression) else { return nil }
            return Int(l[r].dropFirst(5).dropLast())
        }
        XCTAssertEqual(numbers, Array(0..<300), "every line once, in order, across compactions")
        XCTAssertFalse(shown.text.contains("trimmed away"), shown.text)
    }

    func testAMissingFileWithoutFollowIsAnError() throws {
        let dir = TestSupport.makeTemporaryDirectory("console-wait")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let o = try TestSupport.run(TestSupport.product("faultline"), ["console", dir + "/none.log", "--no-follow"])
        XCTAssertEqual(o.exitCode, 3, o.description)
        XCTAssertTrue(o.stderr.contains("No such file or directory"), o.stderr)
    }
}
