// When a local ELF symbol's STT_FILE name stands in for a frame's file: as llvm-symbolizer, only
// when DWARF gave no frame at all. Where a function's DIE covers an address but no line row does
// (the first instructions of a GCC `.cold` part), llvm prints `??:0:0`. Built at test time.
import Foundation
import XCTest

final class SymbolTableFileTests: XCTestCase {
    func testColdPartWithoutALineRowPrintsUnknownFileAsLLVMDoes() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer, "needs llvm-symbolizer")
        let root = Fixtures.temporaryDirectory("cold-part")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let exe = root + "/cold"
        let built = Fixtures.run("/usr/bin/env", ["g++", "-std=c++17", "-g", "-O2", Fixtures.sourceDir + "/cold_part.cpp", "-o", exe])
        XCTAssertEqual(built.status, 0, built.stderr)
        let cold = try XCTUnwrap(Fixtures.functionSymbols(exe).first { $0.2 == "main.cold" }, "g++ made no main.cold")
        let addresses = (cold.0..<(cold.0 + cold.1)).map { "0x" + String($0, radix: 16) }
        let theirs = Fixtures.run(llvm, ["--obj=\(exe)", "--inlines"] + addresses)
        XCTAssertTrue(theirs.stdout.hasPrefix("main.cold\n??:0:0\n"), "the subject must start without a line row: \(theirs.stdout.prefix(200))")
        let ours = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system", "--no-debuginfod", "--obj", exe] + addresses)
        XCTAssertEqual(ours.status, 0, ours.stderr)
        XCTAssertEqual(ours.stdout, theirs.stdout, "--obj mode is llvm-symbolizer's, byte for byte")
        XCTAssertFalse(ours.stdout.contains("cold_part.cpp:0:0"))
    }

    /// Without DWARF the STT_FILE name is still the file (llvm prints `n.c:0:0`).
    func testLocalSymbolWithoutDWARFTakesItsFileSymbolsName() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer, "needs llvm-symbolizer")
        let root = Fixtures.temporaryDirectory("stt-file")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try "static int __attribute__((noinline)) tripled(int x) { return x * 3; }\nint main(int c, char **v) { return tripled(c); }\n"
            .write(toFile: root + "/n.c", atomically: false, encoding: .utf8)
        let exe = root + "/n"
        let built = Fixtures.run("/usr/bin/env", ["sh", "-c", "cd \(root) && gcc -O2 n.c -o n"])
        XCTAssertEqual(built.status, 0, built.stderr)
        let local = try XCTUnwrap(Fixtures.functionSymbols(exe).first { $0.2 == "tripled" })
        let address = "0x" + String(local.0, radix: 16)
        let ours = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system", "--no-debuginfod", "--obj", exe, address])
        XCTAssertEqual(ours.stdout, "tripled\nn.c:0:0\n\n")
        XCTAssertEqual(ours.stdout, Fixtures.run(llvm, ["--obj=\(exe)", "--inlines", address]).stdout)
    }
}
