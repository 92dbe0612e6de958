// The file log on a real, small tmpfs that fills up: the cap holds at every moment, no line is
// torn, every loss is counted, and logging resumes by itself when space returns.
@testable import Faultline
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

final class FileLogFullDiskTests: XCTestCase {
    var dir = ""
    var mnt = ""
    var mounted = false

    override func setUpWithError() throws {
        dir = TestSupport.makeTemporaryDirectory("logging-full-disk")
        mnt = dir + "/tiny"
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        guard getuid() == 0, (try? TestSupport.shell("mount -t tmpfs -o size=300k tmpfs '\(mnt)'")) != nil else {
            throw XCTSkip("mounting a small tmpfs is not permitted here")
        }
        mounted = true
    }

    override func tearDown() {
        if mounted { _ = try? TestSupport.shell("umount '\(mnt)'") }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Writes to `path` until the file system refuses (ENOSPC); bounded by the mount's size.
    func fillDisk(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x2E, count: 512)
        for _ in 0..<2000 where block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    func freeBytes() -> Int {
        var s = statvfs()
        statvfs(mnt, &s)
        return Int(s.f_bavail) * Int(s.f_bsize)
    }

    static func size(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    func parsedLines(_ path: String) throws -> [LogLineFormat.Line] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.isEmpty || text.hasSuffix("\n"), "the file ends with a whole line")
        let ls = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for l in ls where LogLineFormat.parse(l) == nil { XCTFail("torn or glued line: \(l.prefix(120))") }
        return ls.compactMap { LogLineFormat.parse($0) }
    }

    func testFullDiskKeepsTheNewestLinesWithinTheCapAndLoggingResumesWhenSpaceReturns() throws {
        let path = mnt + "/app.log"
        let cap = 64 * 1024
        // Redirected stderr: the outage is reported there once.
        let errPath = dir + "/stderr.txt"
        let saved = dup(2)
        let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        dup2(errFD, 2)
        var restored = false
        func restoreStderr() {
            if !restored { dup2(saved, 2); close(saved); close(errFD); restored = true }
        }
        defer { restoreStderr() }

        // A watcher records the largest size the file ever had while the test runs.
        let largest = Atomic<Int>(0)
        let watching = Atomic<Bool>(true)
        let watcher = Thread {
            while watching.load(ordering: .relaxed) {
                _ = largest.max(FileLogFullDiskTests.size(path), ordering: .relaxed)
                sched_yield()
            }
        }
        watcher.start()
        defer { watching.store(false, ordering: .relaxed) }

        let log = try FileLogger(path: path, maximumBytes: cap)
        let body = String(repeating: "x", count: 180)
        // Up to just under the cap, every line on disk when error() returns.
        var i = 0
        while Self.size(path) < cap - 400 && i < 2000 {
            log.error("before \(i) \(body)")
            i += 1
        }
        XCTAssertGreaterThan(Self.size(path), cap / 2)

        // The disk is full: the next line needs a trim, whose copy cannot be written; the trim
        // compacts in place and the newest lines are written.
        fillDisk(mnt + "/filler-1")
        let trimsBefore = LogTrimCount.read(forFile: path)
        for k in 0..<10 { log.error("newest \(k) \(body)") }
        XCTAssertGreaterThan(LogTrimCount.read(forFile: path), trimsBefore, "trimmed although the disk was full")
        let afterCompaction = try parsedLines(path).map(\.message)
        XCTAssertTrue((0..<10).allSatisfy { k in afterCompaction.contains { $0.hasPrefix("newest \(k) ") } }, "the newest lines are in the file")
        XCTAssertEqual(log.droppedLines, 0)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: mnt).contains { $0.contains(".trim.") }, "no temporary left")

        // Keep the disk full: queued batches and synchronous lines. While the file holds more
        // than half its cap a failed write compacts it and the newer lines win, so whether this
        // file loses any depends on how the pages fall; a file with no older half to give up (a
        // new one) loses its lines, and counts them.
        for round in 0..<20 {
            fillDisk(mnt + "/filler-2")
            for k in 0..<20 { log.info("full \(round) \(k) \(body)") }
            log.error("full \(round) sync \(body)")
        }
        let freshPath = mnt + "/fresh.log"
        let fresh = try FileLogger(path: freshPath, maximumBytes: cap)
        fillDisk(mnt + "/filler-2")
        for k in 0..<5 { fresh.error("fresh \(k) \(body)") }
        XCTAssertGreaterThan(fresh.droppedLines, 0, "a full disk loses lines, and counts them")
        XCTAssertLessThanOrEqual(Self.size(path), cap)
        _ = try parsedLines(path)

        // Space returns: a burst far larger than the cap (queued, written in batches) stays
        // within the cap and leaves the disk room.
        unlink(mnt + "/filler-1")
        unlink(mnt + "/filler-2")
        log.error("space returned")
        fresh.error("space returned")
        fresh.close()
        // The note is written by the first write that works after lines were lost, then the line.
        let note = "log lines were dropped: No space left on device"
        let freshLines = try parsedLines(freshPath).map(\.message)
        XCTAssertEqual(freshLines.count, 2, "\(freshLines)")
        XCTAssertTrue(freshLines.contains("space returned") && freshLines.contains { $0.hasSuffix(note) }, "\(freshLines)")
        let recovered = try parsedLines(path).map(\.message)
        XCTAssertTrue(recovered.suffix(2).contains("space returned"), "\(recovered.suffix(4))")
        for k in 0..<3000 { log.info("burst \(k) \(body)") }
        log.error("after space returned")
        log.close()
        watching.store(false, ordering: .relaxed)
        restoreStderr()

        XCTAssertLessThanOrEqual(largest.load(ordering: .relaxed), cap, "the cap held at every moment")
        XCTAssertGreaterThan(freeBytes(), 300 * 1024 - cap - 64 * 1024, "the burst did not fill the disk again")
        let messages = try parsedLines(path).map(\.message)
        XCTAssertEqual(messages.last, "after space returned")
        XCTAssertTrue(messages.contains { $0.hasPrefix("burst 2999 ") })
        let err = try String(contentsOfFile: errPath, encoding: .utf8)
        XCTAssertEqual(err.components(separatedBy: "cannot write the file log \(freshPath)").count - 1, 1, "once for the fresh file's outage: \(err)")
    }

    func testATornLastLineOfAnEarlierRunIsEndedBeforeTheNextLine() throws {
        let path = mnt + "/torn.log"
        try Data("2026-12-01T20:51:4".utf8).write(to: URL(fileURLWithPath: path))
        let log = try FileLogger(path: path, maximumBytes: 8192)
        log.error("first line of this run")
        log.close()
        let ls = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(ls.count, 2)
        XCTAssertEqual(ls.first, "2026-12-01T20:51:4", "the torn line stays alone")
        XCTAssertEqual(LogLineFormat.parse(ls[1])?.message, "first line of this run", "not glued to the torn one")
    }

    func testACapBelowTheFloorIsRefusedWithAClearError() {
        XCTAssertThrowsError(try FileLogger(path: mnt + "/small.log", maximumBytes: 1000)) { error in
            XCTAssertTrue("\(error)".contains("at least \(FileLogger.smallestCap)"), "\(error)")
        }
    }
}
