// DWARF 5 directory entries (6.2.4.1): entry 0 is the compilation directory itself. A program
// built as Debian builds glibc (in a subdirectory, `-fdebug-prefix-map=ROOT=.`, so comp_dir and
// entry 0 are the relative `./nptl`) must read `./nptl/pthread_kill.c`, as llvm-symbolizer
// prints it, not `./nptl/./nptl/pthread_kill.c`; files under other relative entries are still
// joined to the compilation directory. Built at test time.
import Foundation
import XCTest
import FaultlineProtocol
@testable import FaultlineSymbolication

final class DirectoryEntryTests: XCTestCase {
    func testRelativeDirectoryEntryZeroIsNotJoinedTwice() throws {
        let root = Fixtures.temporaryDirectory("dwarf5-dirs")
        defer { try? FileManager.default.removeItem(atPath: root) }
        for d in ["nptl", "include"] { try FileManager.default.createDirectory(atPath: "\(root)/\(d)", withIntermediateDirectories: true) }
        try """
        static inline __attribute__((always_inline)) int scaled(int x) { return x * 7 + 1; }
        """.write(toFile: "\(root)/include/scale.h", atomically: false, encoding: .utf8)
        try """
        #include "scale.h"
        __attribute__((noinline)) int fl_kill_it(int x) { return scaled(x) ^ 3; }
        int main(int c, char **v) { return fl_kill_it(c); }
        """.write(toFile: "\(root)/nptl/pthread_kill.c", atomically: false, encoding: .utf8)
        let exe = "\(root)/pk"
        let cc = Fixtures.run(
            "/usr/bin/env",
            ["sh", "-c", "cd \(root)/nptl && gcc -g -gdwarf-5 -O2 -I../include -fdebug-prefix-map=\(root)=. -Wl,--build-id -o \(exe) pthread_kill.c"])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let (lo, size) = try XCTUnwrap(Fixtures.functionSymbols(exe).first { $0.2 == "fl_kill_it" }.map { ($0.0, $0.1) })
        let addresses = (0..<max(size, 1)).map { "0x" + String(lo + $0, radix: 16) }

        let ours = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system", "--no-debuginfod", "--obj", exe] + addresses)
        XCTAssertEqual(ours.status, 0, ours.stderr)
        XCTAssertTrue(ours.stdout.contains("./nptl/pthread_kill.c:"), ours.stdout)
        XCTAssertFalse(ours.stdout.contains("./nptl/./nptl/"), ours.stdout)
        if let llvm = Fixtures.llvmSymbolizer {
            let theirs = Fixtures.run(llvm, ["--obj=\(exe)", "--inlines"] + addresses)
            XCTAssertEqual(ours.stdout, theirs.stdout, "--obj mode is llvm-symbolizer's, byte for byte")
        }
        // Report mode reads the same index: the frame's file is the one llvm prints.
        let symbolicator = Symbolicator(
            locator: DebugFileLocator(explicitFiles: [exe], searchSystem: false), indexCacheDirectory: root + "/cache", persistIndexes: false)
        let id = try XCTUnwrap(try ELFInfo.read(path: exe).buildID)
        let frames = try XCTUnwrap(
            symbolicator.symbolicate(buildID: id, modulePath: exe, relativeAddress: lo, isReturnAddress: false, architecture: .x86_64).frames)
        XCTAssertEqual(frames.last?.file, "./nptl/pthread_kill.c")
        XCTAssertEqual(
            DWARFIndexBuilder.join("./nptl/pthread_kill.c", compDir: "./nptl", version5Directories: ["./nptl", "../include"]), "./nptl/pthread_kill.c")
        XCTAssertEqual(
            DWARFIndexBuilder.join("../include/scale.h", compDir: "./nptl", version5Directories: ["./nptl", "../include"]), "./nptl/../include/scale.h")
        XCTAssertEqual(DWARFIndexBuilder.join("sub/x.c", compDir: "/src", version5Directories: nil), "/src/sub/x.c")
    }
}
