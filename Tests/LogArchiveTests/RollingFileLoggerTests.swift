// The rolling logger and the uploader in-process: rolling by size and by age, caps that count
// compressed archives, leftovers, and what each server answer does to an archive.
@testable import Faultline
import FaultlineProtocol
import FaultlineServer
import FaultlineTestSupport
import Foundation
import XCTest
import FaultlineHashing

final class RollingFileLoggerTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("rolling") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func names() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { !$0.hasPrefix(".") }.sorted() }
    func size(_ n: String) -> Int { var st = stat(); stat(dir + "/" + n, &st); return Int(st.st_size) }

    func testRollsBySizeAtLineBoundariesAndGzipsEveryRolledFile() throws {
        var c = RollingFileLogger.Configuration(directory: dir)
        c.maximumFileBytes = 2000
        c.maximumFiles = 1000
        let log = try RollingFileLogger(c)
        for i in 0..<200 { log.info("order \(i) shipped") }
        log.roll()
        XCTAssertTrue(log.waitForArchives(timeout: 20))
        log.close()
        let archives = names().filter { $0.hasSuffix(".log.gz") }
        XCTAssertGreaterThan(archives.count, 5, "200 lines of ~90 bytes in 2000-byte files")
        XCTAssertEqual(names().filter { $0.hasSuffix(".gz.tmp") }, [])
        for a in archives {
            let text = String(decoding: try Inflate.gunzip(Data(contentsOf: URL(fileURLWithPath: dir + "/" + a))), as: UTF8.self)
            XCTAssertLessThanOrEqual(text.utf8.count, 2000, "\(a) passed the size cap")
            XCTAssertTrue(text.hasSuffix("\n"), "\(a) ends mid-line")
        }
        let seq = Corpus.sequenceOfOrders(try Corpus.lines(inFolder: dir))
        XCTAssertEqual(seq, Array(0..<200), "every line once, in order, across the archives")
    }

    func testRollsByAgeEvenWhenSmall() throws {
        var c = RollingFileLogger.Configuration(directory: dir)
        c.maximumFileAge = 0.3
        let log = try RollingFileLogger(c)
        log.info("first")
        log.flush()
        Thread.sleep(forTimeInterval: 1.2)
        XCTAssertTrue(log.waitForArchives(timeout: 10))
        log.info("second")
        log.flush()
        Thread.sleep(forTimeInterval: 1.2)
        XCTAssertTrue(log.waitForArchives(timeout: 10))
        log.close()
        XCTAssertEqual(names().filter { $0.hasSuffix(".log.gz") }.count, 2, "\(names())")
        // An idle file is not rolled: no empty archives.
        XCTAssertTrue(names().filter { $0.hasSuffix(".log") }.allSatisfy { size($0) == 0 }, "\(names())")
    }

    func testFileCapCountsCompressedArchivesAndEvictsOldestFirst() throws {
        var c = RollingFileLogger.Configuration(directory: dir)
        c.maximumFileBytes = 1000
        c.maximumFiles = 4
        let log = try RollingFileLogger(c)
        for i in 0..<300 { log.info("order \(i) shipped") }
        log.roll()
        XCTAssertTrue(log.waitForArchives(timeout: 20))
        log.close()
        let files = names().filter { $0.hasSuffix(".log") || $0.hasSuffix(".log.gz") }
        XCTAssertLessThanOrEqual(files.count, 4, "the cap counts archives and the active file: \(files)")
        XCTAssertGreaterThan(log.evictedFiles, 10)
        // What is left is the newest: the last line survives, the first does not.
        let seq = Corpus.sequenceOfOrders(try Corpus.lines(inFolder: dir))
        XCTAssertEqual(seq.last, 299)
        XCTAssertFalse(seq.contains(0))
        XCTAssertEqual(seq, Array(seq.first!...299), "a contiguous newest run, oldest evicted first")
    }

    func testByteCapCountsCompressedBytes() throws {
        var c = RollingFileLogger.Configuration(directory: dir)
        c.maximumFileBytes = 4000
        c.maximumTotalBytes = 6000
        c.compressionLevel = 0  // stored, so compressed sizes stay near the raw ones
        let log = try RollingFileLogger(c)
        for i in 0..<500 { log.info("order \(i) shipped") }
        log.roll()
        XCTAssertTrue(log.waitForArchives(timeout: 20))
        log.close()
        let total = names().reduce(0) { $0 + size($1) }
        XCTAssertLessThanOrEqual(total, 6000)
        XCTAssertGreaterThan(log.evictedFiles, 0)
    }

    func testLeftoverLogOfAKilledRunIsCompressedOnceAtNextStart() throws {
        // A previous run died after the .gz was renamed but before its .log was removed, and
        // another one died mid-gzip (a .tmp) with its .log intact.
        let done = "app-00000000000000000001.log", half = "app-00000000000000000002.log"
        try Data("done line\n".utf8).write(to: URL(fileURLWithPath: dir + "/" + done))
        try SDKGzip.gzipData("done line\n").write(to: URL(fileURLWithPath: dir + "/" + done + ".gz"))
        try Data("half line\n".utf8).write(to: URL(fileURLWithPath: dir + "/" + half))
        try Data([0x1f, 0x8b, 0x08]).write(to: URL(fileURLWithPath: dir + "/" + half + ".gz.tmp"))
        let idle = "app-00000000000000000003.log"  // an active file that never got a line
        FileManager.default.createFile(atPath: dir + "/" + idle, contents: nil)
        let log = try RollingFileLogger(.init(directory: dir))
        XCTAssertTrue(log.waitForArchives(timeout: 10))
        log.close()
        let all = names()
        XCTAssertTrue(all.contains(done + ".gz") && all.contains(half + ".gz"), "\(all)")
        XCTAssertFalse(all.contains(done) || all.contains(half + ".gz.tmp") || all.contains(half), "\(all)")
        XCTAssertFalse(all.contains(idle) || all.contains(idle + ".gz"), "an empty leftover is removed, not archived: \(all)")
        XCTAssertEqual(try Corpus.lines(inFolder: dir).sorted(), ["done line", "half line"], "each line exactly once")
    }

    func testSecondWriterOnTheSameFolderIsRefused() throws {
        let a = try RollingFileLogger(.init(directory: dir))
        defer { a.close() }
        XCTAssertThrowsError(try RollingFileLogger(.init(directory: dir)))
    }

    /// Rolled files waiting for gzip are never deleted by the caps, except one whose compression
    /// failed once nothing else is left to delete: a compressor that keeps failing (a full disk)
    /// must not let the folder grow without bound.
    func testTheCapsDeleteARolledFileOnlyOnceItsCompressionFailed() throws {
        let folder = ArchiveDirectory(path: dir, baseName: "app")
        for n in 1...4 { try Data(repeating: 0x61, count: 100).write(to: URL(fileURLWithPath: dir + "/app-0000000000000000000\(n).log")) }
        XCTAssertEqual(folder.enforceCaps(maxFiles: 2, maxBytes: 1 << 20, compressionRatio: 0.2), [], "waiting for gzip: kept")
        let gone = folder.enforceCaps(
            maxFiles: 2, maxBytes: 1 << 20, compressionRatio: 0.2,
            uncompressible: ["app-00000000000000000001.log", "app-00000000000000000003.log"])
        XCTAssertEqual(gone, ["app-00000000000000000001.log", "app-00000000000000000003.log"], "the failed ones, oldest first")
        XCTAssertEqual(folder.files().map(\.name), ["app-00000000000000000002.log", "app-00000000000000000004.log"])
    }

    func testTheArchiveChecksumIsSHA256() {
        XCTAssertEqual(SHA256Hash.hex(Data("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256Hash.hex(Data()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let million = Data(repeating: 0x61, count: 1_000_000)
        XCTAssertEqual(SHA256Hash.hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

/// A scripted archive endpoint: answers in order, records what was sent.
final class ScriptedArchives: ArchivePosting, @unchecked Sendable {
    var answers: [ArchiveAnswer]
    var probeAnswer = ArchiveAnswer(outcome: .sent, logUpload: .on)
    var posted: [[String: String]] = []
    var probes = 0
    init(_ answers: [ArchiveAnswer]) { self.answers = answers }
    func postArchive(_ body: Data, url: URL, headers: [String: String]) -> ArchiveAnswer {
        posted.append(headers)
        return answers.isEmpty ? ArchiveAnswer(outcome: .sent, logUpload: .on) : answers.removeFirst()
    }
    func askArchiveSwitch(url: URL, headers: [String: String]) -> ArchiveAnswer { probes += 1; return probeAnswer }
}

final class FakeClock: SDKClock, @unchecked Sendable {
    var t = 1000.0
    func now() -> Double { t }
    func sleep(seconds: Double) { t += seconds }
}

final class ArchiveUploaderTests: XCTestCase {
    var dir = ""
    override func setUp() {
        dir = TestSupport.makeTemporaryDirectory("uploader")
        for i in 1...3 { try! SDKGzip.gzipData("line \(i)\n").write(to: URL(fileURLWithPath: dir + "/app-0000000000000000000\(i).log.gz")) }
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func archives() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".gz") }.sorted() }

    func uploader(_ t: ScriptedArchives, clock: FakeClock = FakeClock(), drops: DropCounter = DropCounter()) throws -> ArchiveUploader {
        ArchiveUploader(
            directory: dir, dsn: try DSN(parsing: "http://0123456789abcdef0123456789abcdef@127.0.0.1:9/1"),
            metadata: .init(installID: "inst", appID: "app", release: "r 1/ü"), transport: t, clock: clock, recheckInterval: 60,
            drop: { drops.add($0) })
    }

    final class DropCounter: @unchecked Sendable {
        var n = 0
        func add(_ k: Int) { n += k }
    }

    func testDeletesOnlyAfterAcknowledgementOldestFirstWithMetadata() throws {
        let t = ScriptedArchives([ArchiveAnswer(outcome: .sent, logUpload: .on), ArchiveAnswer(outcome: .retryable(reason: "503"), logUpload: nil)])
        let u = try uploader(t)
        let s = u.pass()
        XCTAssertEqual(s.sent, 1)
        XCTAssertEqual(s.stoppedBy, "backoff")
        XCTAssertEqual(archives(), ["app-00000000000000000002.log.gz", "app-00000000000000000003.log.gz"], "the failed one stays")
        XCTAssertEqual(t.posted[0]["X-Faultline-Archive-Name"], "app-00000000000000000001.log.gz")
        XCTAssertEqual(t.posted[0]["X-Faultline-Archive-Sha256"], SHA256Hash.hex(SDKGzip.gzipData("line 1\n")))
        XCTAssertEqual(t.posted[0]["X-Faultline-Install-Id"], "inst")
        XCTAssertEqual(t.posted[0]["X-Faultline-Release"], "r%201%2F%C3%BC")
        XCTAssertEqual(u.pass().stoppedBy, "backoff", "back-off holds before the next attempt")
    }

    func testRateLimitKeepsArchiveUntilRetryAfter() throws {
        let clock = FakeClock()
        let t = ScriptedArchives([ArchiveAnswer(outcome: .rateLimited(seconds: 30, categories: []), logUpload: nil)])
        let u = try uploader(t, clock: clock)
        XCTAssertEqual(u.pass().stoppedBy, "rate limit")
        XCTAssertEqual(archives().count, 3)
        clock.t += 10
        XCTAssertEqual(u.pass().sent, 0)
        clock.t += 25
        XCTAssertEqual(u.pass().sent, 3)
        XCTAssertEqual(archives(), [])
    }

    func testRejectedArchiveIsDeletedAndCountedAsLost() throws {
        let drops = DropCounter()
        let t = ScriptedArchives([ArchiveAnswer(outcome: .rejected(status: 400), logUpload: .on)])
        let u = try uploader(t, drops: drops)
        let s = u.pass()
        XCTAssertEqual(s.rejected, 1)
        XCTAssertEqual(s.sent, 2)
        XCTAssertEqual(drops.n, 1)
    }

    func testSwitchOffKeepsArchivesPersistsAndAsksAgainLater() throws {
        let clock = FakeClock()
        let t = ScriptedArchives([ArchiveAnswer(outcome: .rejected(status: 403), logUpload: .off)])
        t.probeAnswer = ArchiveAnswer(outcome: .rejected(status: 403), logUpload: .off)
        let drops = DropCounter()
        let u = try uploader(t, clock: clock, drops: drops)
        XCTAssertEqual(u.pass().stoppedBy, "switched off")
        XCTAssertEqual(archives().count, 3, "nothing deleted while off")
        XCTAssertEqual(drops.n, 0, "kept archives are not losses")
        XCTAssertEqual(try String(contentsOfFile: dir + "/.upload-state", encoding: .utf8), "off")
        // A new uploader (a restart) honours the persisted state: no upload, one probe per interval.
        let t2 = ScriptedArchives([])
        t2.probeAnswer = ArchiveAnswer(outcome: .rejected(status: 403), logUpload: .off)
        let u2 = try uploader(t2, clock: clock)
        u2.pass(); u2.pass()
        XCTAssertEqual(t2.posted.count, 0)
        XCTAssertEqual(t2.probes, 1)
        t2.probeAnswer = ArchiveAnswer(outcome: .sent, logUpload: .on)
        clock.t += 61
        XCTAssertEqual(u2.pass().sent, 3)
        XCTAssertEqual(try String(contentsOfFile: dir + "/.upload-state", encoding: .utf8), "on")
    }
}

enum SDKGzip {
    static func gzipData(_ s: String) -> Data { Deflate.gzip(Data(s.utf8))! }
}
extension Inflate {
    static func gunzip(_ d: Data) throws -> Data { try inflate(d, limit: 1 << 30) }
}
extension Corpus {
    static func sequenceOfOrders(_ lines: [String]) -> [Int] {
        lines.compactMap { l in l.range(of: "order ").flatMap { r in Int(l[r.upperBound...].prefix { $0.isNumber }) } }
    }
}
