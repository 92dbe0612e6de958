// dwz supplementary files (.gnu_debugaltlink, .debug_sup) and split DWARF (.dwo, .dwp) on
// binaries built at test time (tools/build-symbolication-fixtures: supplementary/, split/).
import Foundation
import XCTest
import FaultlineTestSupport
@testable import FaultlineSymbolication

final class SupplementaryAndSplitDWARFTests: XCTestCase {
    /// Every byte of every function of `binary` (from `nm -S`).
    func everyByte(_ binary: String) -> [UInt64] {
        Fixtures.functionSymbols(binary).flatMap { (a, s, _) in (a..<(a + s)).map { $0 } }
    }

    func ours(_ object: String, _ addresses: [UInt64], debugDirectories: [String] = [], cache: String? = nil) throws -> (text: String, notes: [String]) {
        let s = Symbolicator(
            locator: DebugFileLocator(debugDirectories: debugDirectories, searchSystem: false),
            indexCacheDirectory: cache, persistIndexes: cache != nil)
        var sym = try LLVMStyleSymbolizer(objectFile: object, symbolicator: s)
        sym.demangle = false
        let input = Array(addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n").utf8)
        var out: [UInt8] = []
        _ = input.withUnsafeBytes { sym.run(input: $0, output: &out) }
        return (String(decoding: out, as: UTF8.self), sym.notes)
    }

    func llvm(_ object: String, _ addresses: [UInt64]) throws -> String {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer, "llvm-symbolizer is needed (tools/setup installs the Swift toolchain)")
        let input = Data(addresses.map { "0x" + String($0, radix: 16) + "\n" }.joined().utf8)
        let r = Fixtures.run(llvm, ["--obj=\(object)", "--inlines", "--no-demangle"], stdin: input)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout
    }

    func euAddr2line(_ object: String, _ addresses: [UInt64]) throws -> String {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/usr/bin/eu-addr2line"), "eu-addr2line (elfutils) is needed")
        let r = Fixtures.run("/usr/bin/eu-addr2line", ["-e", object, "-f", "-i", "-a"] + addresses.map { "0x" + String($0, radix: 16) })
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout
    }

    // MARK: Supplementary files

    /// Each way of naming and finding the dwz file gives, on every byte, what llvm-symbolizer
    /// gives on the binaries before dwz (llvm-symbolizer itself cannot follow dwz references).
    func testDwzVariantsAnswerLikeTheOriginalBinaries() throws {
        let d = try Fixtures.directory() + "/supplementary"
        for prog in ["a", "b"] {
            let addrs = everyByte("\(d)/orig/\(prog)")
            XCTAssertGreaterThan(addrs.count, 100)
            let expected = try llvm("\(d)/orig/\(prog)", addrs)
            XCTAssertTrue(expected.contains("fl_shared_leaf"), "the fixture must inline the shared functions")
            for variant in ["abs", "rel", "buildid", "sup5"] {
                let dirs = variant == "buildid" ? ["\(d)/buildid/debugdir"] : []
                let (got, notes) = try ours("\(d)/\(variant)/\(prog)", addrs, debugDirectories: dirs)
                XCTAssertEqual(got, expected, "\(variant)/\(prog)")
                XCTAssertEqual(notes, [], "\(variant)/\(prog)")
            }
            // libdw itself (eu-addr2line) follows the GNU altlink the same way on both.
            XCTAssertEqual(try euAddr2line("\(d)/rel/\(prog)", addrs), try euAddr2line("\(d)/orig/\(prog)", addrs))
        }
    }

    /// The lazy cold path (a few addresses: a partial index) reads the supplementary file too.
    func testDwzLazyColdPathThroughTheCLI() throws {
        let d = try Fixtures.directory() + "/supplementary"
        let entry = try XCTUnwrap(Fixtures.functionSymbols("\(d)/orig/a").first { $0.2 == "entry_a" })
        let addrs = Array(stride(from: entry.0, to: entry.0 + entry.1, by: 3))
        for variant in ["rel", "sup5"] {
            let r = Fixtures.run(
                Fixtures.faultlineBinary,
                ["symbolicate", "--no-cache", "--no-demangle", "--obj", "\(d)/\(variant)/a"] + addrs.map { "0x" + String($0, radix: 16) })
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout, try llvm("\(d)/orig/a", addrs), variant)
        }
    }

    /// Without its supplementary file a dwz'd file's DWARF is not used (no half-named frames):
    /// ELF symbols only, and the user is told which file is missing.
    func testMissingSupplementaryFileFallsBackToSymbolsAndSaysWhy() throws {
        let d = try Fixtures.directory() + "/supplementary"
        let addrs = everyByte("\(d)/orig/a")
        let (got, notes) = try ours("\(d)/missing/a", addrs)
        XCTAssertFalse(
            got.contains("dwz_a.c") || got.contains("shared_inline.h") || got.contains("fl_shared"), "no DWARF answer without the supplementary file")
        XCTAssertTrue(got.contains("entry_a\n??:0:0"), "ELF symbols still name functions")
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue(notes.first?.contains("supplementary file was not found") == true && notes.first?.contains("common.debug") == true, "\(notes)")
        let r = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--obj", "\(d)/missing/a", "0x" + String(addrs[0], radix: 16)])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("supplementary file was not found"), r.stderr)
    }

    /// The supplementary file is fetched by its build-id from a real elfutils debuginfod when it is
    /// nowhere on disk (debuginfod indexes dwz files like any debug file; gdb fetches them so).
    func testSupplementaryFileFetchedFromDebuginfod() throws {
        let d = try Fixtures.directory() + "/supplementary"
        let alone = Fixtures.temporaryDirectory("dwz-alone")
        let served = Fixtures.temporaryDirectory("dwz-served")
        let cache = Fixtures.temporaryDirectory("dwz-debuginfod-cache")
        defer { for p in [alone, served, cache] { try? FileManager.default.removeItem(atPath: p) } }
        try FileManager.default.copyItem(atPath: "\(d)/rel/a", toPath: alone + "/a")
        try FileManager.default.copyItem(atPath: "\(d)/rel/common.debug", toPath: served + "/common.debug")
        let id = try XCTUnwrap(try ELFInfo.read(path: "\(d)/rel/common.debug").buildID)
        guard let upstream = try ElfutilsDebuginfod(serving: served) else {
            throw TestSupport.ShellError(command: "debuginfod", output: "not installed; tools/setup and .ci/run install it")
        }
        defer { upstream.stop() }
        XCTAssertTrue(upstream.waitUntilServes(id), upstream.log)
        let entry = try XCTUnwrap(Fixtures.functionSymbols("\(d)/orig/a").first { $0.2 == "entry_a" })
        let addrs = Array(stride(from: entry.0, to: entry.0 + entry.1, by: 2))
        var env = ProcessInfo.processInfo.environment
        env["DEBUGINFOD_CACHE_PATH"] = nil
        func run(urls: String?) -> Fixtures.RunResult {
            var e = env
            e["DEBUGINFOD_URLS"] = urls
            return Fixtures.run(
                Fixtures.faultlineBinary,
                [
                    "symbolicate", "--cache-dir", cache, "--no-cache", "--no-system", "--no-demangle",
                    "--obj", alone + "/a"
                ] + addrs.map { "0x" + String($0, radix: 16) }, environment: e)
        }
        let without = run(urls: nil)
        XCTAssertTrue(without.stderr.contains("supplementary file was not found"), without.stderr)
        let fetched = run(urls: upstream.url)
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertEqual(fetched.stdout, try llvm("\(d)/orig/a", addrs))
        XCTAssertFalse(fetched.stderr.contains("supplementary"), fetched.stderr)
    }

    func testSupplementaryLinkParsing() throws {
        let d = try Fixtures.directory() + "/supplementary"
        let gnu = try XCTUnwrap(try ELFHandle(path: "\(d)/rel/a").supplementaryLink)
        XCTAssertEqual(gnu.kind, .gnuDebugAltLink)
        XCTAssertEqual(gnu.name, "common.debug")
        XCTAssertEqual(gnu.buildID, try ELFInfo.read(path: "\(d)/rel/common.debug").buildID)
        let sup = try XCTUnwrap(try ELFHandle(path: "\(d)/sup5/a").supplementaryLink)
        XCTAssertEqual(sup.kind, .debugSup)
        XCTAssertTrue(try ELFHandle(path: "\(d)/sup5/common.debug").supplementaryIdentities.contains(sup.identity))
        XCTAssertNil(try ELFHandle(path: "\(d)/sup5/common.debug").supplementaryLink, "a supplementary file names none")
        XCTAssertNil(try ELFHandle(path: "\(d)/orig/a").supplementaryLink)
        // Hostile section contents are refused, not trapped on.
        XCTAssertNil(SupplementaryLink.parseDebugSup([5, 0, 0, 0x41, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]))
        XCTAssertNil(SupplementaryLink.parseDebugSup([5, 0]))
        XCTAssertNil(SupplementaryLink.parseAltLink([0x41, 0x42]))
    }

    // MARK: Split DWARF

    /// .dwo files next to the binary: the same answers as llvm-symbolizer on the same file, and as
    /// on the program built without -gsplit-dwarf.
    func testSplitDWARFWithDwoFilesMatchesLLVMSymbolizer() throws {
        let d = try Fixtures.directory() + "/split"
        for variant in ["dwo", "dwo4"] {
            let addrs = everyByte("\(d)/\(variant)/a")
            let (got, notes) = try ours("\(d)/\(variant)/a", addrs)
            let expected = try llvm("\(d)/\(variant)/a", addrs)
            XCTAssertTrue(expected.contains("fl_shared_leaf"), variant)
            XCTAssertEqual(got, expected, variant)
            XCTAssertEqual(notes, [], variant)
            // The lazy cold path (a few addresses: a partial index of the skeleton's unit).
            let entry = try XCTUnwrap(Fixtures.functionSymbols("\(d)/\(variant)/a").first { $0.2 == "entry_a" })
            let few = Array(stride(from: entry.0, to: entry.0 + entry.1, by: 5))
            let r = Fixtures.run(
                Fixtures.faultlineBinary,
                ["symbolicate", "--no-cache", "--no-demangle", "--obj", "\(d)/\(variant)/a"] + few.map { "0x" + String($0, radix: 16) })
            XCTAssertEqual(r.stdout, try llvm("\(d)/\(variant)/a", few), variant)
            XCTAssertEqual(r.stderr, "", variant)
        }
        let plain = everyByte("\(d)/nosplit/a")
        XCTAssertEqual(try ours("\(d)/nosplit/a", plain).text, try llvm("\(d)/nosplit/a", plain))
    }

    /// Two .dwo files laid out alike: their DIE offsets coincide (each counts from its own
    /// .debug_info), so names cached by offset across split units would name one unit's inlined
    /// function after the other's. Built here with gcc -gsplit-dwarf, compared with llvm-symbolizer,
    /// also through a persisted index.
    func testInlinedNamesOfTwoAlikeDwoFiles() throws {
        let d = Fixtures.temporaryDirectory("split-alike")
        for name in ["aaaa", "bbbb"] {
            try """
            static inline __attribute__((always_inline)) int helper_\(name)(volatile int *p) { return *p * 7 + 1; }
            __attribute__((noinline)) int call_\(name)(volatile int *p) { return helper_\(name)(p) * 3; }

            """.write(toFile: "\(d)/\(name).c", atomically: true, encoding: .utf8)
        }
        try """
        int call_aaaa(volatile int *p); int call_bbbb(volatile int *p);
        int main(void) { volatile int x = 2; return call_aaaa(&x) + call_bbbb(&x); }

        """.write(toFile: "\(d)/m.c", atomically: true, encoding: .utf8)
        let cc = Fixtures.run("/bin/sh", ["-c", "cd '\(d)' && gcc -O2 -g -gsplit-dwarf -o prog aaaa.c bbbb.c m.c"])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let addrs = everyByte("\(d)/prog")
        let expected = try llvm("\(d)/prog", addrs)
        XCTAssertTrue(expected.contains("helper_bbbb") && expected.contains("helper_aaaa"), expected)
        XCTAssertEqual(try ours("\(d)/prog", addrs).text, expected)
        let cache = Fixtures.temporaryDirectory("split-alike-cache")
        _ = try ours("\(d)/prog", addrs, cache: cache)
        XCTAssertEqual(try ours("\(d)/prog", addrs, cache: cache).text, expected, "answered from the persisted index")
    }

    /// A .dwp package: libdw 0.188 cannot read it, so the split units' addresses answer from the
    /// skeletons' line tables and the ELF symbols (no inlining, nothing of the package) and the note
    /// names the package and the elfutils version. llvm-symbolizer reads it (checked so the fixture
    /// is known to be a real package).
    func testDwpPackageIsReportedNotMisread() throws {
        let d = try Fixtures.directory() + "/split"
        let addrs = everyByte("\(d)/dwp/a")
        XCTAssertTrue(try llvm("\(d)/dwp/a", addrs).contains("fl_shared_leaf"))
        let cache = Fixtures.temporaryDirectory("dwp-cache")
        let (got, notes) = try ours("\(d)/dwp/a", addrs, cache: cache)
        XCTAssertFalse(got.contains("fl_shared"), "nothing of the split units' DIEs from a .dwp")
        XCTAssertTrue(got.contains("dwz_a.c:"), "lines from the skeleton's own table")
        XCTAssertTrue(got.contains("entry_a\n"), got)
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue(notes[0].contains("a.dwp") && notes[0].contains("0.188") && notes[0].contains("0.191"), notes[0])
        // An index that lacks units is not persisted (a later run with the .dwo files must not be
        // answered from it).
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasSuffix(".fltidx") }, [])
    }

    /// Report mode (a Sentry event naming the module by path and build-id) says the same.
    func testReportModePrintsTheNotes() throws {
        let d = try Fixtures.directory()
        let base: UInt64 = 0x5555_0000_0000
        for (path, expected) in [("\(d)/split/missing/a", "a.dwo"), ("\(d)/supplementary/missing/a", "supplementary file was not found")] {
            let id = try XCTUnwrap(try ELFInfo.read(path: path).buildID)
            let entry = try XCTUnwrap(Fixtures.functionSymbols(path).first { $0.2 == "entry_a" })
            let event = """
                {"event_id":"0123456789abcdef0123456789abcdef","platform":"native","level":"fatal",
                 "exception":{"values":[{"type":"SIGSEGV","stacktrace":{"frames":[{"instruction_addr":"0x\(String(base + entry.0 + 1, radix: 16))"}],
                   "instruction_addr_adjustment":"none"}}]},
                 "debug_meta":{"images":[{"type":"elf","code_file":"\(path)","code_id":"\(id.hex)","image_addr":"0x\(String(base, radix: 16))","image_size":1048576}]}}
                """
            let file = Fixtures.temporaryDirectory("report-notes") + "/event.json"
            try event.write(toFile: file, atomically: true, encoding: .utf8)
            let r = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system", file])
            XCTAssertTrue(r.stdout.contains("entry_a"), r.stdout + r.stderr)
            XCTAssertTrue(r.stderr.contains(expected), r.stderr)
        }
    }

    /// A `.dwo` that is gone is reported, and the skeleton's own line table (in the binary) still
    /// answers file and line with the symbol table's functions, byte for byte as llvm-symbolizer.
    func testMissingDwoIsReportedAndItsSkeletonsLinesStillAnswer() throws {
        let d = try Fixtures.directory() + "/split"
        let addrs = everyByte("\(d)/missing/a")
        let (got, notes) = try ours("\(d)/missing/a", addrs)
        XCTAssertFalse(got.contains("fl_shared"))
        XCTAssertEqual(got, try llvm("\(d)/missing/a", addrs))
        XCTAssertTrue(got.contains(".c:"), "file and line from the skeleton's table")
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue(notes[0].contains("split-DWARF unit(s) not found (a.dwo)"), notes[0])
        // The lazy cold path notices it too, for an address in the unit.
        let entry = try XCTUnwrap(Fixtures.functionSymbols("\(d)/missing/a").first { $0.2 == "entry_a" })
        let r = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--obj", "\(d)/missing/a", "0x" + String(entry.0, radix: 16)])
        XCTAssertTrue(r.stderr.contains("a.dwo"), r.stderr)
    }

    /// A SwiftPM build's Swift objects carry skeleton units that name clang modules' .pcm files
    /// (types only, no code). They are not missing split units: no note, and the index is persisted.
    func testClangModuleReferencesAreNotMissingSplitUnits() throws {
        let crasher = URL(fileURLWithPath: Fixtures.faultlineBinary).deletingLastPathComponent().path + "/faultline-crasher"
        let dwarf = Fixtures.run("/bin/sh", ["-c", "readelf --debug-dump=info '\(crasher)' | grep -c 'dwo_name.*\\.pcm'"])
        XCTAssertGreaterThan(
            Int(dwarf.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 0,
            "the crasher no longer has clang-module references; this test needs a binary that does")
        let cache = Fixtures.temporaryDirectory("pcm-cache")
        let r = Fixtures.run(
            Fixtures.faultlineBinary,
            [
                "symbolicate", "--rebuild-index", "--cache-dir", cache, "--no-system",
                "--obj", crasher, "0x10"
            ])
        XCTAssertFalse(r.stderr.contains("split-DWARF"), r.stderr)
        let stored = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasSuffix(".fltidx") }
        XCTAssertEqual(stored.count, 1, "the full index of a Swift binary is persisted")
    }
}
