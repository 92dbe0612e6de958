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

    /// A breadcrumb's record as the log path writes it into a slot, rendered as events and
    /// crash reports render it; nil when it does not fit in `room` bytes.
    func rendered(
        _ b: BreadcrumbStore.Breadcrumb, _ attributes: KeyValuePairs<String, AttributeValue>, room: Int = 1024
    ) -> (record: [UInt8], json: String)? {
        var slot = [UInt8](repeating: 0, count: room)
        let n = slot.withUnsafeMutableBytes { BreadcrumbStore.write(b, attributes: attributes, includeData: true, into: $0) }
        guard let n else { return nil }
        let record = Array(slot[..<n])
        guard let json = record.withUnsafeBytes({ BreadcrumbRecord.json($0) }) else { return nil }
        return (record, String(decoding: json, as: UTF8.self))
    }

    func breadcrumb(_ message: String, trace: Bool = false) -> BreadcrumbStore.Breadcrumb {
        .init(
            level: .notice, message: message, file: "app/Checkout.swift", function: "pay(order:)", line: 42,
            timestamp: LogTimestamp(seconds: 1_733_318_400, nanoseconds: 5),
            traceID: trace ? "0123456789abcdef0123456789abcdef" : nil, spanID: trace ? "0123456789abcdef" : nil)
    }

    func testARecordRendersTheBreadcrumbJSONTheSDKAlwaysWrote() throws {
        // Sentry's breadcrumb shape, the attributes in the caller's order with a repeated key at
        // its last place, all nine digits of the nanoseconds, the trace ids in data.
        let got = try XCTUnwrap(rendered(breadcrumb("paid \"now\"", trace: true), ["k": 1, "d": 0.5, "b": true, "s": "x\n", "k": 2]))
        XCTAssertEqual(
            got.json,
            #"{"timestamp":1733318400.000000005,"type":"default","category":"log","level":"info","message":"paid \"now\"","#
                + #""data":{"d":0.5,"b":true,"s":"x\n","k":2,"code.function":"pay(order:)","code.filepath":"app/Checkout.swift","#
                + #""code.lineno":42,"trace_id":"0123456789abcdef0123456789abcdef","span_id":"0123456789abcdef"}}"#)
        XCTAssertEqual(got.record.first, BreadcrumbRecord.magic)
        let plain = try XCTUnwrap(rendered(breadcrumb("x"), [:]))
        XCTAssertTrue(plain.json.hasSuffix(#""data":{"code.function":"pay(order:)","code.filepath":"app/Checkout.swift","code.lineno":42}}"#))
    }

    func testRecordsCarryEveryStringAndDoubleAsJSONWriterWritesThem() throws {
        // Each byte JSON escapes at every position, multi-byte UTF-8, and the doubles whose text
        // is hardest (shortest round trip, subnormal, NaN and infinities as null).
        let specials: [UInt8] = [0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x00, 0x1F, 0x01]
        var strings: [String] = []
        for length in 0...20 {
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
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15  // a fixed seed: a failure reproduces
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        for _ in 0..<1_000 { strings.append(String((0..<next(31)).map { _ in alphabet[next(alphabet.count)] })) }
        var doubles: [Double] = [0.1, -0.1, 0.1 + 0.2, 1e-5, 1e15, 5e-324, -.pi, 1e300, .infinity, -.infinity, .nan, -0.0, 42]
        for i in 0..<500 { doubles.append(Double(i) * 0.1) }
        for (i, text) in strings.enumerated() {
            let d = doubles[i % doubles.count]
            let got = try XCTUnwrap(rendered(breadcrumb(text), [text: .double(d), "i": .int(i)]), "\(Array(text.utf8))")
            var message = JSONWriter(), key = JSONWriter(), number = JSONWriter()
            message.string(text)
            key.key(text)
            number.double(d)
            XCTAssertTrue(got.json.contains(#""message":"# + String(decoding: message.bytes, as: UTF8.self) + ","), "\(Array(text.utf8))")
            XCTAssertTrue(
                got.json.contains(#""data":{"# + String(decoding: key.bytes + number.bytes, as: UTF8.self) + #","i":\#(i),"#),
                "\(Array(text.utf8)) \(d)")
            XCTAssertNoThrow(try JSONValue.parse(Data(got.json.utf8)))
        }
    }

    func testARecordThatDoesNotFitIsNotedNotCut() {
        let full = rendered(breadcrumb("fits"), ["k": "v"])!
        XCTAssertNotNil(rendered(breadcrumb("fits"), ["k": "v"], room: full.record.count))
        for room in [1, 10, 24, full.record.count - 1] {
            XCTAssertNil(rendered(breadcrumb("fits"), ["k": "v"], room: room), "room \(room)")
        }
    }

    func testADamagedRecordIsRefusedAndAReportKeepsItsOtherBreadcrumbs() throws {
        let good = try XCTUnwrap(rendered(breadcrumb("whole", trace: true), ["s": "x", "i": 1, "d": 0.5, "b": true]))
        // Every cut and every single byte changed: refused or rendered as valid JSON, never a trap.
        for cut in 0..<good.record.count {
            XCTAssertNil(Array(good.record[..<cut]).withUnsafeBytes { BreadcrumbRecord.json($0) }, "cut at \(cut)")
        }
        for position in good.record.indices {
            for value: UInt8 in [0, 1, 0x7F, 0xFF] {
                var bytes = good.record
                bytes[position] = value
                if let json = bytes.withUnsafeBytes({ BreadcrumbRecord.json($0) }) {
                    XCTAssertNoThrow(try JSONValue.parse(Data(json)), "byte \(position) = \(value)")
                }
            }
        }
        XCTAssertNil((good.record + [0]).withUnsafeBytes { BreadcrumbRecord.json($0) }, "trailing bytes")
        // In a report: hex rendered, JSON kept as written, damaged hex or records dropped alone.
        let hex = HexBytes.encode(good.record)
        let elements: [JSONValue] = [
            .object(JSONObject([BreadcrumbRecord.reportKey: .string(hex)])),
            .object(JSONObject(["message": .string("from C")])),
            .object(JSONObject([BreadcrumbRecord.reportKey: .string(hex + "0")])),
            .object(JSONObject([BreadcrumbRecord.reportKey: .string("zz" + hex.dropFirst(2))])),
            .object(JSONObject([BreadcrumbRecord.reportKey: .string(String(hex.dropLast(2)))]))
        ]
        let kept = elements.compactMap(BreadcrumbRecord.fromReport)
        XCTAssertEqual(kept.count, 2)
        XCTAssertEqual(kept.first?["message"]?.stringValue, "whole")
        XCTAssertEqual(kept.first?["data"]?["span_id"]?.stringValue, "0123456789abcdef")
        XCTAssertEqual(kept.last?["message"]?.stringValue, "from C")
    }

    func testTheCRingRefusesJSONThatWouldPassForARecord() {
        let bytes: [UInt8] = [BreadcrumbRecord.magic, 0x7B, 0x7D]
        XCTAssertEqual(bytes.withUnsafeBytes { faultline_crash_add_breadcrumb($0.baseAddress!.assumingMemoryBound(to: CChar.self), 3) }, -1)
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
