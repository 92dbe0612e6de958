// `logs top` against archives anyone with a public key can upload (issue 29, item 3): one line of
// 200 MiB and 100,000 distinct lines. Memory stays bounded (lines cut at 4 KiB as they stream by,
// a fixed number of counters) and the heavy hitters' counts are exact, through the API (the
// server's peak RSS) and the CLI (the child's). Then the sketch itself against brute force.
import FaultlineProtocol
import FaultlineServer
import FaultlineTestSupport
import Foundation
import XCTest

final class LogTopBoundsTests: XCTestCase {
    var server: ArchiveServer!
    override func tearDown() {
        server?.stop()
        if let d = server?.dataDirectory { try? FileManager.default.removeItem(atPath: d) }
    }

    /// A gzip stream of one CRITICAL line whose message is `mebibytes` MiB of `x`, as concatenated
    /// gzip members (legal, and how a stream is appended to): the test never holds the line.
    static func hugeLineArchive(mebibytes: Int) throws -> Data {
        let head = "2026-12-06T00:00:00.000Z\tCRITICAL\t1:1\tApp/Huge.swift:1\tdump()\tpayload "
        let mib = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        let member = try XCTUnwrap(Deflate.gzip(mib))
        var out = try XCTUnwrap(Deflate.gzip(Data(head.utf8) + mib))
        for _ in 1..<mebibytes { out += member }
        out += try XCTUnwrap(Deflate.gzip(Data("\t\n".utf8)))
        return out
    }

    /// A word for `i` in letters g…z only: never a number or hex to the normaliser, so every line differs.
    static func word(_ i: Int) -> String {
        var n = i, s = ""
        repeat { s.append(Character(UnicodeScalar(UInt8(ascii: "g") + UInt8(n % 20)))); n /= 20 } while n > 0
        return s
    }

    func testTopOfAHugeLineAndManyDistinctLinesStaysBoundedAndCountsHeavyHittersExactly() throws {
        server = try ArchiveServer()  // the default inflated cap, 256 MiB, admits the line
        let huge = try Self.hugeLineArchive(mebibytes: 200)
        XCTAssertEqual(server.upload(huge, install: "i-huge").status, 200)

        // 100,000 distinct INFO lines with an ERROR every 50th; then the heavy hitters on their own.
        var distinct = ""
        distinct.reserveCapacity(8_000_000)
        for i in 0..<100_000 {
            distinct += Corpus.line("2026-12-05T08:00:00.000Z", "INFO", "session \(Self.word(i)) opened")
            if i % 50 == 0 { distinct += Corpus.line("2026-12-05T12:00:00.000Z", "ERROR", "order \(i) failed") }
        }
        var heavy = ""
        for i in 0..<3000 { heavy += Corpus.line("2026-12-04T12:00:00.000Z", "ERROR", "order \(i) failed") }
        for i in 0..<1500 { heavy += Corpus.line("2026-12-04T13:00:00.000Z", "WARNING", "retry \(i % 5) of 5") }
        for i in 0..<800 { heavy += Corpus.line("2026-12-04T14:00:00.000Z", "INFO", "user \"u\(i)\" logged in") }
        for (body, install) in [(distinct, "i-distinct"), (heavy, "i-heavy")] {
            let r = server.upload(Corpus.gzip(body), install: install)
            XCTAssertEqual(r.status, 200, r.text)
        }

        // The API, in the server (this process).
        var answer: RawResponse?
        let api = try ServerMemory.peak { answer = server.get("/api/0/projects/\(server.projectID)/log-archives/top?n=3") }
        let top = try XCTUnwrap(answer)
        XCTAssertEqual(top.status, 200, top.text)
        print("logs top via the API: server RSS \(api.before >> 20) MiB before, peak \(api.peak >> 20) MiB; answer \(top.body.count) bytes")
        // The server runs in this test process, whose resident set already holds what earlier
        // tests left: what the answer costs is the growth of the peak over that.
        XCTAssertLessThan(api.peak - api.before, 300 << 20, "the server's peak RSS grew by \((api.peak - api.before) >> 20) MiB while it answered")
        XCTAssertLessThan(top.body.count, 64 << 10, "the answer holds patterns cut at 4 KiB, not a 200 MiB line")
        try assertHeavyHitters(JSONValue.parse(top.body))

        // The huge line counts once, under its level, as its first 4 KiB.
        var criticalAnswer: RawResponse?
        let filtered = try ServerMemory.peak { criticalAnswer = server.get("/api/0/projects/\(server.projectID)/log-archives/top?level=critical") }
        let critical = try XCTUnwrap(criticalAnswer)
        XCTAssertLessThan(filtered.peak - filtered.before, 300 << 20)
        let only = try XCTUnwrap(try JSONValue.parse(critical.body)["patterns"]?.arrayValue)
        XCTAssertEqual(only.count, 1, String(critical.text.prefix(500)))
        let pattern = try XCTUnwrap(only.first?["pattern"]?.stringValue)
        XCTAssertEqual(only.first?["count"]?.int64Value, 1)
        XCTAssertTrue(pattern.hasPrefix("payload xxxx") && pattern.hasSuffix("…"), String(pattern.prefix(40)))
        XCTAssertLessThanOrEqual(pattern.utf8.count, LogLineTop.maxPatternBytes + 3)
        XCTAssertLessThanOrEqual(only.first?["example"]?.stringValue?.utf8.count ?? .max, LogLineTop.maxExampleBytes + 3)

        // The CLI on the same data directory: a child process, its VmHWM read while it runs (killed past the bound).
        let cli = try PeakMemory.run(
            TestSupport.product("faultline"),
            ["logs", "top", "-n", "3", "--json", "--data-dir", server.dataDirectory] + TestDatabase.serveArguments(dataDirectory: server.dataDirectory),
            limit: 400 << 20, timeout: 300)
        XCTAssertEqual(cli.outcome.exitCode, 0, cli.description)
        print("faultline logs top: peak RSS \(cli.observedPeak >> 20) MiB, \(String(format: "%.1f", cli.outcome.duration)) s")
        XCTAssertFalse(cli.killedAtLimit, "the CLI's peak RSS stays under 400 MiB")
        XCTAssertGreaterThan(cli.observedPeak, 0)
        try assertHeavyHitters(JSONValue.parse(Data(cli.outcome.stdout.utf8)))
    }

    private func assertHeavyHitters(_ top: JSONValue, file: StaticString = #filePath, line: UInt = #line) throws {
        let patterns = try XCTUnwrap(top["patterns"]?.arrayValue, file: file, line: line)
        XCTAssertEqual(
            patterns.map { "\($0["count"]!.int64Value!) \($0["level"]!.stringValue!) \($0["pattern"]!.stringValue!)" },
            ["5000 ERROR order <num> failed", "1500 WARNING retry <num> of <num>", "800 INFO user \"<str>\" logged in"],
            "exact counts for the heavy hitters", file: file, line: line)
        XCTAssertEqual(patterns.first?["first_seen"]?.stringValue, "2026-12-04T12:00:00.000Z", file: file, line: line)
        XCTAssertEqual(patterns.first?["last_seen"]?.stringValue, "2026-12-05T12:00:00.000Z", file: file, line: line)
        XCTAssertEqual(patterns.first?["example"]?.stringValue, "order 0 failed", file: file, line: line)
        XCTAssertEqual(top["lines"]?.int64Value, 100_000 + 2000 + 3000 + 1500 + 800 + 1, file: file, line: line)
        XCTAssertEqual(top["truncated_lines"]?.int64Value, 1, file: file, line: line)
        XCTAssertEqual(top["sketch_overflowed"]?.boolValue, true, "100,000 distinct patterns, 8192 counters", file: file, line: line)
        let unlisted = try XCTUnwrap(top["unlisted_at_most"]?.int64Value, file: file, line: line)
        XCTAssertTrue(unlisted >= 1 && unlisted < 800, "every unlisted pattern is rarer than the last listed: \(unlisted)", file: file, line: line)
    }

    // MARK: the sketch against brute force

    /// Writes `texts` as gzip archives into a new folder; returns their paths.
    static func archives(_ texts: [String]) throws -> [String] {
        let dir = TestSupport.makeTemporaryDirectory("top-sketch")
        return try texts.enumerated().map { i, t in
            let path = dir + "/\(i).log.gz"
            try Corpus.gzip(t).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// 40 heavy patterns of skewed frequency among 6,000 distinct ones, over three archives and two
    /// threads of 64 counters each: the sketch overflows, and the second pass's counts, order,
    /// first/last seen and the bound on what is not listed all match a brute-force count.
    func testWithTooFewCountersTheSecondPassStillGivesExactCounts() throws {
        var texts = ["", "", ""]
        var truth: [String: (count: Int64, first: String, last: String, example: String)] = [:]
        var rng: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int { rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return Int((rng >> 33) % UInt64(n)) }
        for i in 0..<30_000 {
            let heavy = next(3) > 0
            let k = heavy ? Int(Double(next(1000)) * Double(next(1000)) / 25_000) : next(6000)  // 0…39, skewed to 0
            let message = heavy ? "job \(Self.word(k)) took \(i) ms" : "rare \(Self.word(k + 100)) \(i)"
            let ts = String(format: "2026-12-0%dT%02d:%02d:00.000Z", 1 + next(3), next(24), next(60))
            texts[next(3)] += Corpus.line(ts, "INFO", message)
            let key = "INFO " + LogLineNormaliser.pattern(message)
            var t = truth[key] ?? (0, ts, ts, message)
            t.count += 1
            // The example: the message of the earliest line; of lines as early, the smallest (as bytes).
            if ts < t.first || (ts == t.first && Array(message.utf8).lexicographicallyPrecedes(Array(t.example.utf8))) { t.example = message }
            t.first = min(t.first, ts); t.last = max(t.last, ts)
            truth[key] = t
        }
        let paths = try Self.archives(texts)
        defer { try? FileManager.default.removeItem(atPath: (paths[0] as NSString).deletingLastPathComponent) }
        var q = LogTopQuery()
        q.limit = 10
        let r = LogLineTop.scan(paths: paths, query: q, parallelism: 2, counters: 64)
        XCTAssertTrue(r.sketchOverflowed)
        XCTAssertEqual(r.lines, 30_000)
        let expected = truth.sorted { a, b in
            a.value.count != b.value.count ? a.value.count > b.value.count : Array(a.key.utf8).lexicographicallyPrecedes(Array(b.key.utf8))
        }
        XCTAssertEqual(r.patterns.map { "\($0.level) \($0.pattern) \($0.count)" }, expected.prefix(10).map { "\($0.key) \($0.value.count)" })
        for p in r.patterns {
            XCTAssertEqual(p.firstSeen, truth["\(p.level) \(p.pattern)"]?.first)
            XCTAssertEqual(p.lastSeen, truth["\(p.level) \(p.pattern)"]?.last)
            XCTAssertEqual(p.example, truth["\(p.level) \(p.pattern)"]?.example)
        }
        XCTAssertGreaterThanOrEqual(r.unlistedAtMost, expected[10].value.count, "a bound, not a guess")

        // With counters to spare, one pass and the same answer.
        let roomy = LogLineTop.scan(paths: paths, query: q, parallelism: 2)
        XCTAssertFalse(roomy.sketchOverflowed)
        XCTAssertEqual(roomy.patterns, r.patterns)
        XCTAssertEqual(roomy.unlistedAtMost, expected[10].value.count, "exact: the 11th count")
    }

    /// Lines are cut at `maxLineBytes` wherever the 32 KiB inflation pieces split them, never inside
    /// a UTF-8 character, and a line cut inside its message still counts under its level.
    func testLongLinesAreCutAtTheCapAcrossInflationPieces() throws {
        let cap = LogLineTop.maxLineBytes
        let head = "2026-12-01T00:00:00.000Z\tWARNING\t1:1\tA.swift:1\tf()\t"
        var text = ""
        let infoHead = "2026-12-01T00:00:00.000Z\tINFO\t42:43\tApp/Orders.swift:10\tplace()\t"  // Corpus.line's
        // The cap exactly, with its last TAB.
        text += Corpus.line("2026-12-01T00:00:00.000Z", "INFO", String(repeating: "q", count: cap - infoHead.utf8.count - 1))
        text += head + String(repeating: "é", count: 50_000) + "\t\n"  // 100 KB: crosses pieces, cut inside a 2-byte character
        text += head + String(repeating: "é", count: 50_000) + "\t\n"
        text += String(repeating: "z", count: 70_000) + "\n"  // not the file-log format: level "-"
        let paths = try Self.archives([text])
        defer { try? FileManager.default.removeItem(atPath: (paths[0] as NSString).deletingLastPathComponent) }
        var q = LogTopQuery()
        q.limit = 10
        let r = LogLineTop.scan(paths: paths, query: q)
        XCTAssertEqual(r.lines, 4)
        XCTAssertEqual(r.truncatedLines, 3, "the line of exactly \(cap) bytes is whole")
        let byLevel = Dictionary(uniqueKeysWithValues: r.patterns.map { ($0.level, $0) })
        XCTAssertEqual(byLevel["WARNING"]?.count, 2)
        let cut = try XCTUnwrap(byLevel["WARNING"]?.pattern)
        XCTAssertEqual(cut, String(repeating: "é", count: (cap - head.utf8.count) / 2) + "…", "whole characters, marked cut")
        XCTAssertEqual(byLevel["INFO"]?.pattern.hasSuffix("…"), false)
        XCTAssertEqual(byLevel["-"]?.pattern, String(repeating: "z", count: cap) + "…")
    }
}
