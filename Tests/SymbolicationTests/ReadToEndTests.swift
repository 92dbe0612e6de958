// `readToEnd`, how address mode reads its standard input: a regular file from where its offset
// stands (read straight into the result), and a pipe past the first buffer's worth.
import Foundation
import XCTest
import FaultlineFiles

final class ReadToEndTests: XCTestCase {
    func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(state: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    func testARegularFileIsReadFromItsOffsetToItsEnd() throws {
        let path = Fixtures.temporaryDirectory("read-to-end") + "/input"
        let content = bytes(200_000, seed: 1)
        try Data(content).write(to: URL(fileURLWithPath: path))
        for offset in [0, 1, 4096, 199_999, 200_000] {
            let fd = open(path, O_RDONLY)
            XCTAssertGreaterThanOrEqual(fd, 0)
            defer { close(fd) }
            XCTAssertEqual(lseek(fd, off_t(offset), SEEK_SET), off_t(offset))
            XCTAssertEqual(readToEnd(fd), Array(content[offset...]), "from offset \(offset)")
        }
    }

    /// A file whose size says nothing of what it holds (procfs says 0): read on past the size.
    func testAFileLongerThanItsSizeIsReadToItsEnd() throws {
        let fd = open("/proc/self/status", O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let text = String(decoding: readToEnd(fd), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("Name:"), text)
        XCTAssertTrue(text.contains("\nVmPeak:") || text.contains("\nThreads:"), text)
        XCTAssertTrue(text.hasSuffix("\n"), "to its last line")
    }

    func testAPipeIsReadPastTheFirstBuffer() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let content = bytes(300_000, seed: 2)
        let writeEnd = ends[1]
        let writer = Thread {
            content.withUnsafeBytes { b in
                var off = 0
                while off < b.count {
                    let n = write(writeEnd, b.baseAddress! + off, b.count - off)
                    if n <= 0 { break }
                    off += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        XCTAssertEqual(readToEnd(ends[0]), content)
        close(ends[0])
    }
}
