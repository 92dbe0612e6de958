// `faultline symbolicate` as a CI script sees it: output, messages and exit codes.
import Foundation
import XCTest
import FaultlineProtocol
@testable import FaultlineSymbolication
import FaultlineTestSupport

final class CommandLineTests: XCTestCase {
    var cache: String!

    override func setUp() { cache = Fixtures.temporaryDirectory("cli-cache") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: cache) }

    func symbolicate(_ args: [String], stdin: Data? = nil) -> Fixtures.RunResult {
        Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--cache-dir", cache, "--no-system"] + args, stdin: stdin)
    }

    // MARK: Address mode

    func testAddressModeArgumentsAndStdinAgree() throws {
        let d = try Fixtures.directory()
        let m = try Fixtures.markers("c-O2")
        let addr = "0x" + String(try XCTUnwrap(m["c_outer"]), radix: 16)
        let a = symbolicate(["--obj", "\(d)/c-O2.full", addr])
        let b = symbolicate(["--obj=\(d)/c-O2.full", "--inlines"], stdin: Data((addr + "\n").utf8))
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(a.stdout, b.stdout)
        XCTAssertEqual(a.stdout, "entry_c\n\(Fixtures.sourceDir)/inline_chain.c:\(try Fixtures.line("c_outer", in: "inline_chain.c")):5\n\n")
    }

    /// A large input is written by two threads in turns of a chunk of lines. A write that fails
    /// on the second thread (the file size limit reached just after the first chunk: EFBIG, with
    /// SIGXFSZ ignored) is reported with its own reason, not the other thread's errno.
    func testAWriteErrorOnTheSecondPrintingThreadNamesItsReason() throws {
        let (object, distinct) = try Fixtures.largeInputSubject()
        let chunk = LLVMStyleSymbolizer.ChunkPrinting.linesPerChunk
        let lines = (0..<(chunk * 3)).map { "0x" + String(distinct[$0 % distinct.count], radix: 16) }
        // The first chunk's text is what its lines print on their own (one thread, under 8,192 lines).
        let first = symbolicate(["--obj", object], stdin: Data((lines[..<chunk].joined(separator: "\n") + "\n").utf8))
        XCTAssertEqual(first.status, 0, first.stderr)
        let firstBytes = first.stdout.utf8.count
        let all = cache + "/all.txt", out = cache + "/out.txt"
        try (lines.joined(separator: "\n") + "\n").write(toFile: all, atomically: true, encoding: .utf8)
        let command =
            "trap '' XFSZ; exec prlimit --fsize=\(firstBytes + 1) '\(Fixtures.faultlineBinary)' symbolicate --cache-dir '\(cache!)' --no-system --obj '\(object)' < '\(all)' > '\(out)'"
        let r = Fixtures.run("/bin/sh", ["-c", command])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("cannot write to standard output: \(String(cString: strerror(EFBIG)))"), r.stderr)
        let written = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertEqual(written.count, firstBytes + 1)
        XCTAssertEqual(written.prefix(firstBytes), Data(first.stdout.utf8))
    }

    func testUnknownAddressPrintsQuestionMarks() throws {
        let d = try Fixtures.directory()
        // Below the first symbol and outside every unit (llvm-symbolizer prints the same; far
        // above the image it would name the size-0 `_end` symbol, as llvm-symbolizer does too).
        let r = symbolicate(["--obj", "\(d)/c-O2.full", "0x10", "0x20"])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.stdout, "??\n??:0:0\n\n??\n??:0:0\n\n")
    }

    /// An object with neither DWARF nor ELF symbols: every line prints llvm-symbolizer's unknown
    /// record (the printer's path without an index), and the reason is on stderr.
    func testObjectWithoutDebugInformationOrSymbolsPrintsUnknownRecords() throws {
        let d = try Fixtures.directory()
        let bare = Fixtures.temporaryDirectory("bare-object") + "/bare"
        let strip = Fixtures.run(
            "/usr/bin/objcopy",
            ["--strip-all", "-R", ".dynsym", "-R", ".dynstr", "-R", ".gnu.hash", "-R", ".gnu.version", "-R", ".gnu.version_r", "\(d)/c-O2.full", bare])
        XCTAssertEqual(strip.status, 0, strip.stderr)
        let r = symbolicate(["--obj", bare], stdin: Data("0x1139\nnot-an-address\n0x10\n".utf8))
        XCTAssertEqual(r.status, 4, r.stderr)
        XCTAssertEqual(r.stdout, "??\n??:0:0\n\n??\n??:0:0\n\n??\n??:0:0\n\n")
        XCTAssertTrue(r.stderr.contains("no debug information or symbols found"), r.stderr)
        XCTAssertTrue(r.stderr.contains("1 input line(s) were not addresses"), r.stderr)
    }

    func testGarbageAddressesPrintUnknownWithPartialExit() throws {
        let d = try Fixtures.directory()
        let r = symbolicate(["--obj", "\(d)/c-O2.full"], stdin: Data("not-an-address\n0xzz\n".utf8))
        XCTAssertEqual(r.status, 4)
        XCTAssertEqual(r.stdout, "??\n??:0:0\n\n??\n??:0:0\n\n")
        XCTAssertTrue(r.stderr.contains("2 input line(s) were not addresses"), r.stderr)
    }

    /// Every way llvm-symbolizer reads a number, and lines it cannot read, against the oracle.
    func testAddressSyntaxMatchesLLVMSymbolizer() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer)
        let d = try Fixtures.directory()
        let outer = try XCTUnwrap(try Fixtures.markers("c-O2")["c_outer"])
        let lines = [
            "0x" + String(outer, radix: 16), "0X" + String(outer, radix: 16, uppercase: true), String(outer),
            "0" + String(outer, radix: 8), "0b" + String(outer, radix: 2), "+0x" + String(outer, radix: 16),
            "0x" + String(outer, radix: 16) + " trailing words",
            "CODE 0x" + String(outer, radix: 16), String(outer, radix: 16) + "zz", "junk", "-1",
            // Blank lines: llvm-symbolizer 21 prints an unknown record for each.
            "", "  ", "\t\r", "0x" + String(outer, radix: 16) + "\r",
            // A NUL ends the line's text (llvm-symbolizer reads a C string).
            "0x" + String(outer, radix: 16) + "\u{0}junk", "\u{0}0x" + String(outer, radix: 16)
        ]
        let input = Data((lines.joined(separator: "\n") + "\n").utf8)
        let theirs = Fixtures.run(llvm, ["--obj=\(d)/c-O2.full", "--inlines"], stdin: input)
        let ours = symbolicate(["--obj", "\(d)/c-O2.full"], stdin: input)
        XCTAssertEqual(ours.stdout, theirs.stdout)
        XCTAssertEqual(parseLLVMOutput(ours.stdout).filter { $0.first?.function == "entry_c" }.count, 9)
    }

    /// The same spellings in an input large enough to be read on a second thread while the module
    /// loads, with the lines a quick reading of `0x` and hex digits must hand to the general one:
    /// 16 digits, 17 with a leading zero and 17 that overflow (to the address itself, if the
    /// top digit were dropped), `0x` alone, a digit that is not
    /// hex, a CR, a space or a NUL after the digits, and a last line without a newline.
    func testAddressSyntaxMatchesLLVMSymbolizerInALargeInput() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer)
        let (object, bytes) = try Fixtures.largeInputSubject()
        let outer = bytes[bytes.count / 2]
        let hex = String(outer, radix: 16)
        let spellings = [
            "0x" + hex, "0X" + String(outer, radix: 16, uppercase: true), String(outer), "0" + String(outer, radix: 8),
            "0x" + String(repeating: "0", count: 16 - hex.count) + hex, "0x0" + String(repeating: "0", count: 16 - hex.count) + hex,
            "0x1" + String(repeating: "0", count: 16 - hex.count) + hex, "0xffffffffffffffff", "0x", "0x" + hex + "g", "0xg" + hex,
            "0x" + hex + "\r", "0x" + hex + " words", "0x" + hex + "\t", "0x" + hex + "\u{0}junk", "CODE 0x" + hex, "", " 0x" + hex
        ]
        var rng = SplitMix64(state: 16)
        var lines: [String] = []
        while lines.count < LLVMStyleSymbolizer.twoThreadLines + 500 {
            lines.append("0x" + String(bytes[Int(rng.next() % UInt64(bytes.count))], radix: 16))
            if rng.next() % 8 == 0 { lines.append(spellings[Int(rng.next() % UInt64(spellings.count))]) }
        }
        lines += spellings + ["0x" + hex]
        let input = Data(lines.joined(separator: "\n").utf8)  // no newline after the last line
        let theirs = Fixtures.run(llvm, ["--obj=\(object)", "--inlines"], stdin: input)
        XCTAssertEqual(theirs.status, 0, theirs.stderr)
        // Cold (the units the addresses need, parsed while the input is read), then warm (the
        // index the first run stored, loaded while the input is read).
        let cold = symbolicate(["--obj", object], stdin: input)
        let rebuilt = symbolicate(["--rebuild-index", "--obj", object, "0x0"])
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: cache).contains { $0.hasSuffix(".fltidx") }, rebuilt.stderr)
        let warm = symbolicate(["--obj", object], stdin: input)
        for (run, ours) in [("cold", cold), ("warm", warm)] {
            XCTAssertEqual(parseLLVMOutput(ours.stdout).count, lines.count, run)
            let a = ours.stdout.components(separatedBy: "\n\n"), b = theirs.stdout.components(separatedBy: "\n\n")
            XCTAssertEqual(a.count, b.count, run)
            if let i = zip(a, b).map({ $0 == $1 }).firstIndex(of: false) {
                XCTFail("\(run), line \(i) (\(i < lines.count ? lines[i].debugDescription : "past the last line")): ours \(a[i]) llvm \(b[i])")
            }
        }
    }

    /// A blank line prints llvm-symbolizer's unknown record but is not a line that could not be
    /// read: no warning, and the exit code of the addresses alone.
    func testBlankLinesPrintUnknownRecordsWithoutAWarning() throws {
        let d = try Fixtures.directory()
        let outer = try XCTUnwrap(try Fixtures.markers("c-O2")["c_outer"])
        let address = "0x" + String(outer, radix: 16)
        let alone = symbolicate(["--obj", "\(d)/c-O2.full"], stdin: Data("\(address)\n".utf8))
        let r = symbolicate(["--obj", "\(d)/c-O2.full"], stdin: Data("\n\(address)\n \n\r\n".utf8))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "??\n??:0:0\n\n" + alone.stdout + "??\n??:0:0\n\n??\n??:0:0\n\n")
        XCTAssertFalse(r.stderr.contains("not addresses"), r.stderr)
    }

    func testEmptyStdinIsAUsageError() throws {
        let d = try Fixtures.directory()
        let r = symbolicate(["--obj", "\(d)/c-O2.full"], stdin: Data())
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("no addresses given"), r.stderr)
    }

    func testBadObjectsExitWithInputError() throws {
        let d = try Fixtures.directory()
        let truncated = Fixtures.temporaryDirectory("cli-trunc") + "/t.elf"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(d)/c-O2.full"))
        try bytes.prefix(3000).write(to: URL(fileURLWithPath: truncated))
        // An object file not yet linked: its DWARF's addresses are unrelocated.
        let object = Fixtures.temporaryDirectory("cli-reloc") + "/unit.o"
        try "int add(int a, int b) {\n  return a + b;\n}\n".write(toFile: object + ".c", atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cc -O0 -g -c '\(object).c' -o '\(object)'")
        let cases: [(String, String)] = [
            ("\(d)/commands.txt", "not an ELF file"),
            (object, "relocatable object file"),
            (truncated, "truncated ELF file"),
            (d, "is a directory"),
            ("\(d)/missing", "no such file")
        ]
        for (path, message) in cases {
            let r = symbolicate(["--obj", path, "0x1000"])
            XCTAssertEqual(r.status, 3, path)
            XCTAssertTrue(r.stderr.contains(message), "\(path): \(r.stderr)")
            XCTAssertEqual(r.stdout, "")
        }
        // A damaged dump or core given with --exe (the program) is refused as an input, not read
        // as an address of the program.
        let dir = Fixtures.temporaryDirectory("cli-bad-dump")
        try Data().write(to: URL(fileURLWithPath: dir + "/empty.dmp"))
        try Data("MDMQ not quite a minidump".utf8).write(to: URL(fileURLWithPath: dir + "/wrong-magic.dmp"))
        for name in ["empty.dmp", "wrong-magic.dmp"] {
            let r = symbolicate([dir + "/" + name, "--exe", "\(d)/c-O2.full"])
            XCTAssertEqual(r.status, 3, "\(name): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("not JSON (a crash report or event), a Linux core file or a minidump"), "\(name): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", name)
        }
    }

    /// Random damage to the DWARF sections or the section headers: a clear answer or a clear
    /// error, never a crash (run as a child so a crash would show as a signal, not kill the run).
    func testDamagedFilesNeverCrash() throws {
        let d = try Fixtures.directory()
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(d)/c-O2.full")))
        let info = try ELFInfo.read(path: "\(d)/c-O2.full")
        XCTAssertTrue(info.hasDebugInfo)
        let shoff = original.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 0x28, as: UInt64.self)) }
        let dir = Fixtures.temporaryDirectory("damaged")
        var rng = SplitMix64(state: 7)
        for trial in 0..<40 {
            var bytes = original
            for _ in 0..<(1 + Int(rng.next() % 12)) {
                // Half the damage in the section headers, half anywhere after the ELF header.
                let i =
                    rng.next() % 2 == 0
                    ? shoff + Int(rng.next() % UInt64(original.count - shoff))
                    : 64 + Int(rng.next() % UInt64(original.count - 64))
                bytes[i] = UInt8(truncatingIfNeeded: rng.next())
            }
            let path = "\(dir)/damaged-\(trial)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let r = symbolicate(["--no-cache", "--obj", path, "0x1170", "0x1184"])
            XCTAssertTrue([0, 3].contains(r.status), "trial \(trial): status \(r.status) \(r.stderr)")
        }
    }

    func testWrongBuildIDDebugFileIsNotUsed() throws {
        let d = try Fixtures.directory()
        let m = try Fixtures.markers("c-O2")
        let r = symbolicate(["--obj", "\(d)/c-O2.bare", "--debug-file", "\(d)/cxx-O2.debug", "0x" + String(m["c_outer"]!, radix: 16)])
        XCTAssertEqual(r.status, 0)
        // No DWARF may come from the other program; the stripped binary has only .dynsym.
        XCTAssertFalse(r.stdout.contains("templates.cpp"), r.stdout)
        XCTAssertFalse(r.stdout.contains("inline_chain.c"), r.stdout)
    }

    func testUsageErrors() {
        XCTAssertEqual(symbolicate(["--bogus"]).status, 2)
        XCTAssertEqual(symbolicate([]).status, 2)
        XCTAssertEqual(symbolicate(["--obj"]).status, 2)
        let help = symbolicate(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("exit codes"))
    }

    /// `--option=value` on an option that takes no value is refused, as llvm-symbolizer refuses it:
    /// the value was dropped before, so `--no-demangle=false` turned demangling off.
    func testValueOnAFlagIsAUsageError() throws {
        let exe = "\(try Fixtures.directory())/cxx-O2.full"
        for option in ["--no-demangle=false", "--demangle=false", "--inlines=false", "--no-cache=yes", "--json=1"] {
            let r = symbolicate(["--obj", exe, option, "0x1"])
            XCTAssertEqual(r.status, 2, option)
            XCTAssertTrue(r.stderr.contains("takes no value"), "\(option): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", option)
        }
        XCTAssertEqual(symbolicate(["--obj=\(exe)", "--threads=1", "0x1"]).status, 0, "options with values still take `=value`")
    }

    /// `--functions=none` prints no function line and consults no ELF symbol (a frame only they know
    /// prints `??:0:0`); a bare `--functions` wins over it; another value means `linkage`: all as
    /// llvm-symbolizer, byte for byte, on every function byte of a C++ fixture (symbol-only frames
    /// included: its C runtime start-up code has no DWARF).
    func testFunctionsKindMatchesLLVMSymbolizer() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer, "needs llvm-symbolizer")
        let exe = "\(try Fixtures.directory())/cxx-O2.full"
        let addresses = Fixtures.functionBytes(exe).map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n0x1\nnot-an-address\n"
        for options in [["--functions=none"], ["-f=none"], ["--functions=none", "--functions"], ["--functions=linkage"], ["-f=other"]] {
            let ours = symbolicate(["--obj", exe] + options, stdin: Data(addresses.utf8))
            let theirs = Fixtures.run(llvm, ["--obj=\(exe)", "--inlines"] + options, stdin: Data(addresses.utf8))
            XCTAssertEqual(theirs.status, 0, theirs.stderr)
            XCTAssertEqual(ours.stdout, theirs.stdout, "\(options)")
        }
        let none = symbolicate(["--obj", exe, "--functions=none"], stdin: Data(addresses.utf8))
        XCTAssertFalse(none.stdout.contains("??\n"), "no function line")
        let short = symbolicate(["--obj", exe, "--functions=short", "0x1"])
        XCTAssertEqual(short.status, 2)
        XCTAssertTrue(short.stderr.contains("--functions=short"), short.stderr)
    }

    // MARK: Report mode

    /// A crash report in the handler's format, with real addresses of the C fixture loaded at a
    /// PIE-like base: frame 0 the faulting instruction (inlined chain), frame 1 a return address.
    func makeReport(module: String, buildID: BuildID?) throws -> Data {
        let m = try Fixtures.markers("c-O2")
        let base: UInt64 = 0x5555_5555_4000
        let pc = base + m["c_level4"]!
        let ra = base + m["c_outer"]! + 1
        var modules: [JSONValue] = [["path": .string(module), "base": .string("0x" + String(base, radix: 16)), "size": 0x5000]]
        if let buildID { modules[0]["build_id"] = .string(buildID.hex) }
        let report: JSONValue = [
            "format": "faultline-crash", "version": 1, "end": true, "event_id": "0123456789abcdef0123456789abcdef",
            "timestamp": ["sec": 1_700_000_000, "nsec": 0],
            "process": ["pid": 42, "executable": .string(module)],
            "thread": ["tid": 42, "name": "main"],
            "signal": ["number": 11, "name": "SIGSEGV", "code": 1, "code_name": "SEGV_MAPERR", "fault_address": "0x0"],
            "frames": [
                ["address": .string("0x" + String(pc, radix: 16)), "kind": "pc"],
                ["address": .string("0x" + String(ra, radix: 16)), "kind": "return"],
                ["address": "0x1234", "kind": "return"]
            ],
            "modules": .array(modules)
        ]
        return report.serialized()
    }

    func testReportModePrintsBacktraceWithInlinedFrames() throws {
        let d = try Fixtures.directory()
        let module = "\(d)/c-O2.stripped"
        let reportPath = Fixtures.temporaryDirectory("report") + "/x.crash.json"
        try makeReport(module: module, buildID: try ELFInfo.read(path: module).buildID).write(to: URL(fileURLWithPath: reportPath))
        let r = symbolicate([reportPath])
        // The third frame lies in no module: partial result.
        XCTAssertEqual(r.status, 4, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("SIGSEGV: SIGSEGV / SEGV_MAPERR") == true, r.stdout)
        let src = "inline_chain.c"
        let level4Line = try Fixtures.line("c_level4", in: src), outerLine = try Fixtures.line("c_outer", in: src)
        guard lines.count >= 8 else { return XCTFail(r.stdout) }
        XCTAssertTrue(
            lines[1].hasPrefix("#0  0x0000555555555")
                && lines[1].contains(" in level4 at \(Fixtures.sourceDir)/\(src):\(level4Line):5 [inlined] (c-O2.stripped +0x"), lines[1])
        XCTAssertTrue(lines[5].contains(" in entry_c at ") && !lines[5].contains("[inlined]"), lines[5])
        XCTAssertTrue(lines[6].contains(" in entry_c at \(Fixtures.sourceDir)/\(src):\(outerLine):5"), lines[6])
        XCTAssertTrue(lines[7].contains("?? ") && lines[7].contains("[not in any module]"), lines[7])
    }

    func testReportModePrintsWhyItCrashedFirst() throws {
        let data = Fixtures.temporaryDirectory("why")
        defer { try? FileManager.default.removeItem(atPath: data) }
        let crasher = URL(fileURLWithPath: Fixtures.faultlineBinary).deletingLastPathComponent().path + "/faultline-crasher"
        let crash = Fixtures.run(crasher, ["assert", "--data-dir", data], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(crash.status, SIGABRT, crash.stderr)
        let report = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: data + "/crashes").first { $0.hasSuffix(".crash.json") })
        let r = symbolicate([data + "/crashes/" + report])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("Assertion failed: value > 5 (thread ") == true, r.stdout)
        XCTAssertTrue(
            lines.count > 2 && lines[1].hasPrefix("  reported at ") && lines[1].contains("crash_probes.c:") && lines[1].contains("probe_assert"), r.stdout)
        XCTAssertEqual(lines.count > 2 ? lines[2] : "", "  ended by SIGABRT", r.stdout)
    }

    func testReportModePrintsEveryThreadUnlessCrashedOnly() throws {
        let data = Fixtures.temporaryDirectory("threads")
        defer { try? FileManager.default.removeItem(atPath: data) }
        let crasher = URL(fileURLWithPath: Fixtures.faultlineBinary).deletingLastPathComponent().path + "/faultline-crasher"
        let crash = Fixtures.run(crasher, ["parked-threads-segv", "--data-dir", data], environment: ["SWIFT_BACKTRACE": "enable=no"])
        XCTAssertEqual(crash.status, SIGSEGV, crash.stderr)
        let report =
            data + "/crashes/" + (try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: data + "/crashes").first { $0.hasSuffix(".crash.json") }))
        let all = symbolicate([report]).stdout
        XCTAssertTrue(all.hasPrefix("SIGSEGV: "), "the crashing thread first: \(all.prefix(300))")
        let sleeper = try XCTUnwrap(all.range(of: "park-sleep (sleeping):\n"), all)
        XCTAssertTrue(all[sleeper.upperBound...].prefix(2000).contains(" in probe_park_sleep at "), "its frames are symbolicated")
        XCTAssertTrue(all.contains("park-blocked (sleeping):\n    no stack: blocks signals"), all)
        let crashedOnly = symbolicate(["--crashed-only", report]).stdout
        XCTAssertTrue(crashedOnly.hasPrefix("SIGSEGV: ") && crashedOnly.contains(" in probe_segv at "), crashedOnly)
        XCTAssertFalse(crashedOnly.contains("park-"), crashedOnly)
    }

    func testReportModeJSONFillsFramesCallerFirst() throws {
        let d = try Fixtures.directory()
        let module = "\(d)/c-O2.full"
        let reportPath = Fixtures.temporaryDirectory("report-json") + "/x.crash.json"
        try makeReport(module: module, buildID: try ELFInfo.read(path: module).buildID).write(to: URL(fileURLWithPath: reportPath))
        let r = symbolicate(["--json", reportPath])
        XCTAssertEqual(r.status, 4, r.stderr)
        let event = try JSONValue.parse(Data(r.stdout.utf8))
        let frames = try XCTUnwrap(event["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue)
        // Caller first: unknown frame, entry_c (return address), then entry_c ← level1 … level4.
        XCTAssertEqual(frames.map { $0["function"]?.stringValue ?? "-" }, ["-", "entry_c", "entry_c", "level1", "level2", "level3", "level4"])
        XCTAssertEqual(frames.last?["lineno"]?.int64Value, Int64(try Fixtures.line("c_level4", in: "inline_chain.c")))
        XCTAssertEqual(frames.last?["data"]?["inlined"]?.boolValue, true)
    }

    func testSeveralReportsAtOnceEachUnderAHeaderWorstExitCode() throws {
        let d = try Fixtures.directory()
        let module = "\(d)/c-O2.full"
        let dir = Fixtures.temporaryDirectory("several")
        try makeReport(module: module, buildID: try ELFInfo.read(path: module).buildID).write(to: URL(fileURLWithPath: dir + "/1.crash.json"))
        try makeReport(module: module, buildID: try ELFInfo.read(path: module).buildID).write(to: URL(fileURLWithPath: dir + "/2.crash.json"))
        let r = symbolicate([dir + "/1.crash.json", dir + "/2.crash.json"])
        XCTAssertEqual(r.status, 4, "both are partial: \(r.stderr)")
        XCTAssertEqual(r.stdout.components(separatedBy: "==> ").count - 1, 2, r.stdout)
        XCTAssertEqual(r.stdout.components(separatedBy: " in level4 at ").count - 1, 2, r.stdout)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: dir + "/bad.json"))
        XCTAssertEqual(symbolicate([dir + "/1.crash.json", dir + "/bad.json"]).status, 3, "a bad input makes the whole run an input error")
    }

    func testReportModeBadInput() throws {
        let dir = Fixtures.temporaryDirectory("bad-report")
        try Data("{\"hello\": 1}".utf8).write(to: URL(fileURLWithPath: dir + "/a.json"))
        try Data("not json".utf8).write(to: URL(fileURLWithPath: dir + "/b.json"))
        try Data("{\"format\":\"faultline-crash\",\"version\":1}".utf8).write(to: URL(fileURLWithPath: dir + "/c.json"))
        for (file, message) in [("a.json", "neither a Faultline crash report nor a Sentry event"), ("b.json", "not JSON"), ("c.json", "truncated")] {
            let r = symbolicate([dir + "/" + file])
            XCTAssertEqual(r.status, 3, file)
            XCTAssertTrue(r.stderr.contains(message), "\(file): \(r.stderr)")
        }
        XCTAssertEqual(symbolicate([dir]).status, 3)
        XCTAssertEqual(symbolicate([dir + "/none.json"]).status, 3)
    }

    // MARK: Event symbolication (library)

    func testEventSymbolicationIsIdempotent() throws {
        let d = try Fixtures.directory()
        let module = "\(d)/c-O2.full"
        let report = try CrashReport.parse(try makeReport(module: module, buildID: try ELFInfo.read(path: module).buildID))
        let event = CrashEvent.make(from: report)
        let s = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        let once = EventSymbolicator.symbolicate(event: event, with: s)
        XCTAssertEqual(once.resolved, 2); XCTAssertEqual(once.unresolved, 1)
        let twice = EventSymbolicator.symbolicate(event: once.event, with: s)
        XCTAssertEqual(twice.event, once.event)
        XCTAssertEqual(twice.resolved, 2)
    }
}
