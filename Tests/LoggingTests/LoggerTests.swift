// The Logger seam: injection, decorators, the facade, and the line format round trip.
import CFaultlineCrash
@testable import Faultline
import FaultlineProtocol
import Foundation
import XCTest

final class LoggerTests: XCTestCase {
    struct Uploader {
        let log: any Logger
        init(log: any Logger = NullLogger()) { self.log = log }
        func upload(_ id: Int) { log.info("uploading", attributes: ["id": .int(id)]); log.error("upload failed") }
    }

    func testInjectedLoggerSeesEventsWithSourceAndThread() {
        let memory = InMemoryLogger()
        Uploader(log: memory).upload(7)
        XCTAssertEqual(memory.messages, ["uploading", "upload failed"])
        let e = memory.events[0]
        XCTAssertEqual(e.level, .info)
        XCTAssertEqual(e.attributes["id"], .int(7))
        XCTAssertEqual(e.file.description, "LoggingTests/LoggerTests.swift")
        XCTAssertEqual(e.threadID, faultline_current_thread_id())
        XCTAssertLessThan(abs(e.timestamp.secondsSince1970 - Date().timeIntervalSince1970), 5)
        Uploader().upload(1)  // NullLogger default: nothing to assert but that it is accepted
        XCTAssertFalse(NullLogger().isEnabled(.critical))
    }

    func testLevelFilterAndFanOut() {
        let all = InMemoryLogger(), errors = InMemoryLogger()
        let log = FanOutLogger([all, LevelFilterLogger(minimum: .error, errors)])
        log.debug("d"); log.warning("w"); log.error("e"); log.critical("c")
        XCTAssertEqual(all.messages, ["d", "w", "e", "c"])
        XCTAssertEqual(errors.messages, ["e", "c"])
        XCTAssertFalse(LevelFilterLogger(minimum: .error, NullLogger()).isEnabled(.critical))
        var built = 0
        LevelFilterLogger(minimum: .error, all).info(
            {
                built += 1; return "skipped"
            }())
        XCTAssertEqual(built, 0, "a disabled level must not build its message")
    }

    func testCrashReportingLoggerAddsBreadcrumbsAndForwards() {
        let memory = InMemoryLogger()
        CrashReportingLogger(memory).notice("breadcrumb from an injected logger \(getpid())")
        XCTAssertEqual(memory.events.count, 1)
        XCTAssertTrue(BreadcrumbStore.shared.snapshot.contains { $0["message"]?.stringValue == "breadcrumb from an injected logger \(getpid())" })
    }

    func testBreadcrumbsWrittenIntoTheCrashRingKeepEveryCharacterAndAttribute() throws {
        // Escapes inside and across the eight-byte runs the writer copies at once, non-ASCII,
        // every attribute type; read back through the ring (what events and crash reports carry).
        let message = "quote\" back\\ tab\t nl\n ctl\u{01}\u{1f} ü 😀 " + String(repeating: "abcdefgh", count: 5) + "\"x"
        let before = Date().timeIntervalSince1970
        Log.info(message, attributes: ["s": "a\"b\\c\u{7}d", "i": -42, "big": .int(Int.max), "d": 0.1, "e": 1e300, "w": 2.0, "b": true])
        let crumb = try XCTUnwrap(BreadcrumbStore.shared.snapshot.last)
        XCTAssertEqual(crumb["message"]?.stringValue, message)
        XCTAssertEqual(crumb["level"]?.stringValue, "info")
        let data = try XCTUnwrap(crumb["data"])
        XCTAssertEqual(data["s"]?.stringValue, "a\"b\\c\u{7}d")
        XCTAssertEqual(data["i"]?.int64Value, -42)
        XCTAssertEqual(data["big"]?.int64Value, Int64(Int.max))
        XCTAssertEqual(data["d"]?.doubleValue, 0.1)
        XCTAssertEqual(data["e"]?.doubleValue, 1e300)
        XCTAssertEqual(data["w"]?.doubleValue, 2.0)
        XCTAssertEqual(data["b"]?.boolValue, true)
        XCTAssertNotNil(data["code.function"]?.stringValue)
        let t = try XCTUnwrap(crumb["timestamp"]?.doubleValue)
        XCTAssertTrue(t >= before - 1 && t <= Date().timeIntervalSince1970 + 1, "\(t)")

        // Too long for a ring slot: kept, with the message shortened and no data.
        Log.info(String(repeating: "é", count: 2000), attributes: ["k": "v"])
        let long = try XCTUnwrap(BreadcrumbStore.shared.snapshot.last)
        XCTAssertTrue(long["message"]?.stringValue?.hasSuffix("…") ?? false)
        XCTAssertTrue(long["message"]?.stringValue?.hasPrefix("éé") ?? false)
        XCTAssertNil(long["data"]?["k"])
    }

    func testSlotWriterDoublesAreTheTextJSONWriterWrites() {
        // In place when the slot has room, through a temporary otherwise, and an overflow noted
        // (not a partial number) when the text does not fit at all.
        var values: [Double] = [0.1, -0.1, 0.1 + 0.2, 1e-5, 1e15, 5e-324, -.pi, 1e300, .infinity, .nan, -0.0, 42]
        for i in 0..<2_000 { values.append(Double(i) * 0.1) }
        for v in values {
            var expected = JSONWriter()
            expected.double(v)
            for room in [64, expected.bytes.count, expected.bytes.count - 1] {
                var slot = [UInt8](repeating: 0, count: room)
                let (got, overflowed) = slot.withUnsafeMutableBytes { buffer -> ([UInt8], Bool) in
                    var w = SlotWriter(buffer)
                    w.double(v)
                    return (Array(buffer[..<w.count]), w.overflowed)
                }
                if room < expected.bytes.count {
                    XCTAssertTrue(overflowed, "bits \(v.bitPattern)")
                } else {
                    XCTAssertFalse(overflowed)
                    XCTAssertEqual(String(decoding: got, as: UTF8.self), String(decoding: expected.bytes, as: UTF8.self), "bits \(v.bitPattern)")
                }
            }
        }
    }

    func testSlotWriterStringsAreTheTextJSONWriterWrites() {
        // Every length from 0 to 40 (the word-at-a-time paths: whole words, the overlapping last
        // word, the four-byte halves, the byte loop), each byte that needs an escape at every
        // position, and random mixes with multi-byte UTF-8.
        let specials: [UInt8] = [0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x00, 0x1F, 0x01]
        var strings: [String] = []
        for length in 0...40 {
            let plain = (0..<length).map { UInt8(0x61 + $0 % 26) }
            strings.append(String(decoding: plain, as: UTF8.self))
            for position in 0..<length {
                for special in specials {
                    var bytes = plain
                    bytes[position] = special
                    strings.append(String(decoding: bytes, as: UTF8.self))
                }
            }
        }
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\t", "\u{1}", "é", "→", "😀", "/", "}"]
        for _ in 0..<3_000 {
            strings.append(String((0..<Int.random(in: 0...30)).map { _ in alphabet.randomElement()! }))
        }
        var slot = [UInt8](repeating: 0, count: 512)
        for text in strings {
            var expected = JSONWriter()
            expected.string(text)
            let got = slot.withUnsafeMutableBytes { buffer -> [UInt8] in
                var w = SlotWriter(buffer)
                w.raw("x")  // an odd start: the writes are unaligned
                w.string(text)
                return Array(buffer[1..<w.count])
            }
            XCTAssertEqual(got, expected.bytes, "\(Array(text.utf8))")
        }
    }

    func testLogAttributesKeepTheirTypesAndALaterDuplicateWins() throws {
        Log.info("duplicate keys \(getpid())", attributes: ["k": 1, "s": "x", "k": 2.5])
        let crumb = try XCTUnwrap(BreadcrumbStore.shared.snapshot.last)
        XCTAssertEqual(crumb["message"]?.stringValue, "duplicate keys \(getpid())")
        XCTAssertEqual(crumb["data"]?["k"]?.doubleValue, 2.5)
        XCTAssertEqual(crumb["data"]?["s"]?.stringValue, "x")
        let memory = InMemoryLogger()
        Log.bootstrap(memory)
        defer { Log.bootstrap(NullLogger()) }
        Log.info("to the sink", attributes: ["k": 1, "s": "x", "k": 2.5, "b": false])
        XCTAssertEqual(memory.events.last?.attributes, ["k": .double(2.5), "s": "x", "b": false])
    }

    func testFacadeWritesThroughBootstrappedLogger() {
        let memory = InMemoryLogger()
        Log.bootstrap(memory)
        defer { Log.bootstrap(NullLogger()) }
        Log.notice("through the facade", attributes: ["k": "v"])
        Log.logger.warning("through Log.logger")
        XCTAssertEqual(memory.messages, ["through the facade", "through Log.logger"])
        XCTAssertEqual(memory.events[0].level, .notice)
        Log.bootstrap(NullLogger())
        Log.info("after reset")
        XCTAssertEqual(memory.messages.count, 2)
    }

    func testLineFormatRoundTripsAwkwardMessages() throws {
        let e = LogEvent(
            level: .warning, message: "tab\there\nnew line \\ back \u{1} ctl é",
            attributes: ["b": true, "a": "x\ty", "n": 3], traceID: "5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24")
        let text = LogLineFormat.withLine(e, pid: 42, maxBytes: 4096) { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(text.hasSuffix("\n"))
        XCTAssertEqual(text.dropLast().filter { $0 == "\n" }.count, 0)
        let line = try XCTUnwrap(LogLineFormat.parse(Substring(text.dropLast())))
        XCTAssertEqual(line.message, e.message)
        XCTAssertEqual(line.level, .warning)
        XCTAssertEqual(line.pid, 42)
        XCTAssertEqual(line.line, Int(e.line))
        XCTAssertEqual(line.attributes, #"{"trace_id":"5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24","a":"x\ty","b":true,"n":3}"#)
        XCTAssertTrue(line.timestamp.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil, line.timestamp)
    }

    func testLineLongerThanHalfTheCapIsCutAndStillParses() throws {
        let dir = TestSupportDir.make()
        let log = try FileLogger(path: dir + "/long.log", maximumBytes: 8192)
        log.info(String(repeating: "é", count: 20_000))
        log.info("after")
        log.close()
        let text = try String(contentsOfFile: dir + "/long.log", encoding: .utf8)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertLessThanOrEqual(lines[0].utf8.count + 1, 4096)
        XCTAssertTrue(lines[0].hasSuffix("bytes]\t"), String(lines[0].suffix(40)))
        XCTAssertNotNil(LogLineFormat.parse(lines[0]))
        XCTAssertEqual(LogLineFormat.parse(lines[1])?.message, "after")
    }

    /// A reader holding the shared lock (a suspended `faultline console`) never stalls the app's
    /// logging: the writer waits a bounded time, drops and counts the lines, and resumes once
    /// the lock is free, writing how many were lost. The lock file is the owner's only.
    func testAHeldReadersLockDropsLinesInsteadOfStallingTheApp() throws {
        let dir = TestSupportDir.make()
        let path = dir + "/held.log"
        let log = try FileLogger(path: path, maximumBytes: 1 << 20)
        defer { log.close() }
        var st = stat()
        XCTAssertEqual(stat(path + ".lock", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        let reader = open(path + ".lock", O_RDONLY | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        XCTAssertEqual(flock(reader, LOCK_SH), 0)
        log.info("while the reader holds its lock")
        log.flush()
        XCTAssertEqual(log.droppedLines, 1, "dropped and counted, not waited for")
        XCTAssertEqual(flock(reader, LOCK_UN), 0)
        log.info("after")
        log.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { LogLineFormat.parse($0)?.message }
        XCTAssertTrue(lines.contains("after"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("1 log lines were dropped") }, "the loss is written once writing works: \(lines)")
        XCTAssertFalse(lines.contains("while the reader holds its lock"))
    }
}

enum TestSupportDir {
    static func make() -> String {
        let p = NSTemporaryDirectory() + "/logging-\(getpid())-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }
}
