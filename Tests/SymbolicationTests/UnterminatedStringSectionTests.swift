// A debug file whose DWARF string section does not end with NUL (damaged or hostile: found by
// `tools/fuzz elf`, where libdw's line reader ran strlen past the section) is used for its ELF
// symbols only: the function is still named, no line is made up, nothing reads past the file.
import Foundation
import XCTest

final class UnterminatedStringSectionTests: XCTestCase {
    func testAFileWhoseLineStringsAreNotTerminatedIsUsedForItsSymbolsOnly() throws {
        let dir = Fixtures.temporaryDirectory("unterminated-strings")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = dir + "/lines.c"
        try "int answer(int x) { return x * 42 + 1; }\nint main(int argc, char **argv) { return answer(argc); }\n"
            .write(toFile: source, atomically: true, encoding: .utf8)
        let good = dir + "/good"
        let cc = Fixtures.run("/usr/bin/cc", ["-gdwarf-5", "-O0", "-Wl,--build-id=sha1", "-o", good, source])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let address = try XCTUnwrap(Fixtures.functionSymbols(good).first { $0.2 == "answer" }?.0)

        // The intact file: the function and its line.
        let intact = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--obj", good, "0x" + String(address + 4, radix: 16)])
        XCTAssertEqual(intact.status, 0, intact.stderr)
        XCTAssertTrue(intact.stdout.contains("answer") && intact.stdout.contains("lines.c:1"), intact.stdout)

        // The same file with .debug_line_str's last byte (its terminating NUL) overwritten.
        let sections = Fixtures.run("/usr/bin/readelf", ["-S", "-W", good]).stdout
        let row = try XCTUnwrap(sections.split(separator: "\n").first { $0.contains(".debug_line_str ") }, sections)
        let fields = row.split(separator: "]", maxSplits: 1)[1].split(separator: " ")
        let (offset, size) = (try XCTUnwrap(Int(fields[3], radix: 16)), try XCTUnwrap(Int(fields[4], radix: 16)))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        XCTAssertEqual(bytes[offset + size - 1], 0)
        bytes[offset + size - 1] = UInt8(ascii: "x")
        let damaged = dir + "/damaged"
        try bytes.write(to: URL(fileURLWithPath: damaged))

        let run = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--obj", damaged, "0x" + String(address + 4, radix: 16)])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("answer"), "named from the symbol table: \(run.stdout)")
        XCTAssertFalse(run.stdout.contains("lines.c"), "no line from DWARF libdw cannot read safely: \(run.stdout)")
    }
}
