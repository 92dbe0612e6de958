// A burst of lines into a rolling log with small caps, in a real child: the caps delete only
// finished archives (never a rolled file still waiting for gzip), count compressed bytes, and
// leave a full budget of the newest archives; the child prints nothing on stderr.
import FaultlineTestSupport
import Foundation
import XCTest

final class ArchiveBurstTests: XCTestCase {
    let probe = TestSupport.product("faultline-archive-probe")
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("archive-burst") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func files() -> [(name: String, size: Int)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".log") || $0.hasSuffix(".log.gz") }.sorted().map { n in
            var st = stat()
            stat(dir + "/" + n, &st)
            return (n, Int(st.st_size))
        }
    }

    /// The burst's lines that survived: a gapless newest run ending with the last line.
    func assertNewestRunSurvived(_ n: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let seq = Corpus.sequence(try Corpus.lines(inFolder: dir), tag: "burst")
        XCTAssertEqual(seq.last, n - 1, "the newest line survived", file: file, line: line)
        XCTAssertEqual(seq, Array((seq.first ?? 0)..<n), "a gapless newest run: oldest archives went first", file: file, line: line)
    }

    func testBurstWithASixFileCapKeepsSixFilesAndPrintsNothing() throws {
        let o = try TestSupport.run(probe, ["write", dir, "burst", "4000", "--roll", "2000", "--files", "6"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertEqual(o.stderr, "", "no rolled file was deleted under the compressor")
        let all = files()
        XCTAssertEqual(all.count, 6, "a full budget: \(all.map(\.name))")
        XCTAssertEqual(all.filter { $0.name.hasSuffix(".log.gz") }.count, 5, "five archives and the (empty) active file")
        try assertNewestRunSurvived(4000)
    }

    func testBurstWithAByteCapKeepsAFullBudgetOfCompressedArchives() throws {
        let budget = 20000
        let o = try TestSupport.run(probe, ["write", dir, "burst", "4000", "--roll", "2000", "--files", "100000", "--total", "\(budget)"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertEqual(o.stderr, "", "no rolled file was deleted under the compressor")
        let archives = files().filter { $0.name.hasSuffix(".log.gz") }
        let total = archives.reduce(0) { $0 + $1.size }
        let largest = archives.map(\.size).max() ?? 0
        XCTAssertLessThanOrEqual(total, budget)
        // Full within one archive: while a rolled file waits for gzip the caps count it at the
        // compression ratio seen so far, so an eviction decided then can free up to one
        // archive more than the file turns out to need (the machine's timing decides which).
        XCTAssertGreaterThan(total + 2 * largest, budget, "a full budget: \(archives.count) archives, \(total) bytes")
        try assertNewestRunSurvived(4000)
    }
}
