// DWARF 5 directory entries (6.2.4.1): entry 0 is the compilation directory itself. A program
// built as Debian builds glibc (in a subdirectory, `-fdebug-prefix-map=ROOT=.`, so comp_dir and
// entry 0 are the relative `./nptl`) must read `./nptl/pthread_kill.c`, as llvm-symbolizer
// prints it, not `./nptl/./nptl/pthread_kill.c`; files under other relative entries are still
// joined to the compilation directory. A relative comp_dir is joined once in DWARF 4 too (entry 0
// there means comp_dir, and libdw has already joined it). Built at test time.
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
        // Units our reader leaves to libdw: which entry a path is in is inferred from the entries.
        XCTAssertEqual(
            LineTableFilePath.path(libdwJoined: "./nptl/pthread_kill.c", directories: ["./nptl", "../include"], compDir: "./nptl"),
            "./nptl/pthread_kill.c")
        XCTAssertEqual(
            LineTableFilePath.path(libdwJoined: "../include/scale.h", directories: ["./nptl", "../include"], compDir: "./nptl"),
            "./nptl/../include/scale.h")
        XCTAssertEqual(LineTableFilePath.path(libdwJoined: "sub/x.c", directories: ["/src", "sub"], compDir: "/src"), "/src/sub/x.c")
        // An entry `.` prefixes every `./…` path; the longer entry 0 is the one the path is in.
        XCTAssertEqual(LineTableFilePath.path(libdwJoined: "./sub/m2.c", directories: ["./sub", "."], compDir: "./sub"), "./sub/m2.c")
        XCTAssertEqual(LineTableFilePath.path(libdwJoined: "./h2.h", directories: ["./sub", "."], compDir: "./sub"), "./sub/./h2.h")
    }

    /// A relative DW_AT_comp_dir (built in `sub/` with `-fdebug-prefix-map=PARENT=.`, so comp_dir is
    /// `./sub`) is joined once, by llvm's rule, in DWARF 4 and 5, from gcc and from clang: the main
    /// file, a header under `-I.` (DWARF 5 entry `.`, relative to comp_dir) and one under `inc/`.
    func testRelativeCompilationDirectoryIsJoinedOnce() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer, "needs llvm-symbolizer")
        let root = Fixtures.temporaryDirectory("relative-comp-dir")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/sub/inc", withIntermediateDirectories: true)
        try "static inline int twice(int x) { return x * 2 + 1; }\n".write(toFile: "\(root)/sub/h2.h", atomically: false, encoding: .utf8)
        try "static inline int thrice(int x) { return x * 3 - 1; }\n".write(toFile: "\(root)/sub/inc/h.h", atomically: false, encoding: .utf8)
        try """
        #include "inc/h.h"
        #include <h2.h>
        __attribute__((noinline)) int work(int x) { return twice(x) + thrice(x); }
        int main(int c, char **v) { return work(c); }
        """.write(toFile: "\(root)/sub/m2.c", atomically: false, encoding: .utf8)
        var compilers = ["gcc"]
        if Fixtures.run("/usr/bin/env", ["sh", "-c", "command -v clang"]).status == 0 { compilers.append("clang") }
        for cc in compilers {
            for dwarf in ["-gdwarf-4", "-gdwarf-5"] {
                let exe = "\(root)/\(cc)\(dwarf)"
                let built = Fixtures.run(
                    "/usr/bin/env", ["sh", "-c", "cd \(root)/sub && \(cc) -g \(dwarf) -O2 -I. -fdebug-prefix-map=\(root)=. -o \(exe) m2.c"])
                XCTAssertEqual(built.status, 0, built.stderr)
                let addresses = Fixtures.functionSymbols(exe).filter { ["work", "main"].contains($0.2) }
                    .flatMap { s in (s.0..<(s.0 + s.1)).map { "0x" + String($0, radix: 16) } }
                XCTAssertFalse(addresses.isEmpty)
                let ours = Fixtures.run(
                    Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system", "--no-debuginfod", "--obj", exe] + addresses)
                XCTAssertEqual(ours.status, 0, ours.stderr)
                XCTAssertTrue(ours.stdout.contains("./sub/m2.c:"), "\(cc) \(dwarf): \(ours.stdout)")
                XCTAssertFalse(ours.stdout.contains("./sub/./sub/"), "\(cc) \(dwarf)")
                let theirs = Fixtures.run(llvm, ["--obj=\(exe)", "--inlines"] + addresses)
                XCTAssertEqual(ours.stdout, theirs.stdout, "\(cc) \(dwarf): --obj mode is llvm-symbolizer's, byte for byte")
            }
        }
    }
}
