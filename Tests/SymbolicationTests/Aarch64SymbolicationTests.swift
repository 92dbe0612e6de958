// aarch64 ELF files symbolicated on this x86_64 machine. The symbolication fixtures
// (Fixtures/Symbolication) and the crash probes (Tests/CrashProbes/aarch64) are built with the
// aarch64 cross compilers at test time; `faultline symbolicate --obj` must print what the
// toolchain's llvm-symbolizer prints, byte for byte, on every byte of every function, and an
// aarch64 crash report from a real run under qemu-aarch64 must name the user's functions and lines.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

@testable import FaultlineSymbolication

final class Aarch64SymbolicationTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        try Aarch64Emulation.requireTools()
        directory = Fixtures.temporaryDirectory("aarch64")
    }

    /// One file to symbolicate: `object` is what `--obj` gets, `debugFile` its separate debug
    /// file, `symbols` the unstripped build whose function symbols give the addresses.
    struct Variant {
        var name: String
        var object: String
        var debugFile: String?
        var symbols: String
        var optimised: Bool
    }

    /// The fixture sources built for aarch64 the ways a release ships them; every command is
    /// the one in this function (the x86_64 variants are tools/build-symbolication-fixtures'),
    /// then the crash probes and the aarch64 preload library.
    func buildVariants() throws -> [Variant] {
        let src = Fixtures.sourceDir, d = directory
        let c = "aarch64-linux-gnu-gcc -Wl,--build-id=sha1", cxx = "aarch64-linux-gnu-g++ -Wl,--build-id=sha1", objcopy = "aarch64-linux-gnu-objcopy"
        _ = try TestSupport.shell(
            """
            set -e; cd '\(d)'
            \(c) -g -O0 '\(src)/inline_chain.c' -o c-O0
            \(c) -g -O2 '\(src)/inline_chain.c' -o c-O2
            \(c) -g -gdwarf-4 -O2 '\(src)/inline_chain.c' -o c-dwarf4-O2
            \(c) -g -O2 -shared -fPIC '\(src)/inline_chain.c' -o libc-O2.so
            \(cxx) -g -O2 '\(src)/templates.cpp' -o cxx-O2
            \(objcopy) --compress-debug-sections=zlib c-O2 c-O2.zlib
            \(objcopy) --only-keep-debug cxx-O2 cxx-O2.debug
            \(objcopy) --strip-all cxx-O2 cxx-O2.bare
            """)
        let crasher = try Aarch64Emulation.buildCrasher(in: d + "/probes")
        // A real library: Faultline's own crash core and preload library, -O2 -g (tools/build-preload).
        let preload = try Aarch64Emulation.preloadDirectory() + "/libfaultline-preload.so"
        func plain(_ name: String, optimised: Bool) -> Variant { Variant(name: name, object: "\(d)/\(name)", symbols: "\(d)/\(name)", optimised: optimised) }
        return [
            plain("c-O0", optimised: false), plain("c-O2", optimised: true), plain("c-dwarf4-O2", optimised: true),
            plain("libc-O2.so", optimised: true), plain("cxx-O2", optimised: true),
            Variant(name: "c-O2.zlib", object: "\(d)/c-O2.zlib", symbols: "\(d)/c-O2", optimised: true),
            Variant(name: "cxx-O2.bare", object: "\(d)/cxx-O2.bare", debugFile: "\(d)/cxx-O2.debug", symbols: "\(d)/cxx-O2", optimised: true),
            Variant(name: "crasher", object: crasher, symbols: crasher, optimised: false),
            Variant(name: "libcrashlib.so", object: d + "/probes/libcrashlib.so", symbols: d + "/probes/libcrashlib.so", optimised: false),
            Variant(name: "libfaultline-preload.so", object: preload, symbols: preload, optimised: true)
        ]
    }

    func faultlineSymbolicate(_ arguments: [String], stdin: Data? = nil) -> Fixtures.RunResult {
        Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system"] + arguments, stdin: stdin)
    }

    func llvmSymbolizer(_ object: String, _ input: Data) throws -> String {
        let r = Fixtures.run(
            try XCTUnwrap(Fixtures.llvmSymbolizer, "no llvm-symbolizer (the Swift toolchain ships one)"), ["--obj=\(object)", "--inlines"], stdin: input)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout
    }

    /// Every byte of every function (not only instruction starts: a report's return address − 1
    /// from an x86_64-minded client lands mid-instruction), starts and middles alike.
    func testEveryByteOfEveryFunctionMatchesLLVMSymbolizerByteForByte() throws {
        for v in try buildVariants() {
            XCTAssertEqual(try ELFInfo.read(path: v.object).architecture, .aarch64, "\(v.name) is an aarch64 file")
            let functions = try Aarch64Emulation.functionSymbols(in: v.symbols)
            XCTAssertTrue(functions.contains { ["main", "library_fault", "fl_handle_signal"].contains($0.name) }, "\(v.name): \(functions.map(\.name))")
            let addresses = Array(Set(functions.flatMap { $0.start..<($0.start + $0.size) })).sorted()
            let input = Data(addresses.map { "0x" + String($0, radix: 16) + "\n" }.joined().utf8)
            let ours = faultlineSymbolicate(["--obj", v.object] + (v.debugFile.map { ["--debug-file", $0] } ?? []), stdin: input)
            XCTAssertEqual(ours.status, 0, "\(v.name): \(ours.stderr)")
            // The oracle reads the unstripped build: the stripped one's debug file holds the same DWARF.
            let theirs = try llvmSymbolizer(v.debugFile == nil ? v.object : v.symbols, input)
            let a = ours.stdout.components(separatedBy: "\n\n"), b = theirs.components(separatedBy: "\n\n")
            XCTAssertEqual(a.count, addresses.count + 1, "\(v.name): one record per address")
            if let i = zip(a, b).map({ $0 == $1 }).firstIndex(of: false) {
                XCTFail("\(v.name): 0x\(String(addresses[i], radix: 16)) differs:\nours:\n\(a[i])\nllvm-symbolizer:\n\(b[i])")
            }
            XCTAssertEqual(ours.stdout, theirs, "\(v.name): byte-identical output")
            // Not vacuous: the records name source lines, and optimised builds have inlined chains.
            let records = parseLLVMOutput(theirs)
            XCTAssertGreaterThan(records.filter { $0.first.map { !$0.location.hasPrefix("??") } ?? false }.count, addresses.count / 2, v.name)
            if v.optimised { XCTAssertTrue(records.contains { $0.count > 1 }, "\(v.name) has inlined frames") }
        }
    }

    /// The own `.debug_line` reader (LineTable.swift) reads every unit of every aarch64 file
    /// (none left to libdw) into exactly the rows libdw gives (LineTableReaderTests' check).
    func testTheOwnLineTableReaderReadsAarch64UnitsAsLibdwDoes() throws {
        for v in try buildVariants() {
            let path = v.debugFile ?? v.object
            let (own, libdw) = try LineTableReaderTests.walkBoth(path)
            let a = LineTableReaderTests.view(own), b = LineTableReaderTests.view(libdw)
            XCTAssertNil(LineTableReaderTests.firstDifference(a, b), v.name)
            XCTAssertGreaterThan(b.address.count, 0, "\(v.name): libdw read no rows")
            XCTAssertGreaterThan(own.lineTableUnits.own, 0, "\(v.name): our reader read no unit")
            XCTAssertEqual(own.lineTableUnits.libdw, 0, "\(v.name): units left to libdw")
        }
    }

    /// The line of `text` in a probe source (1-based).
    func line(of text: String, in file: String) throws -> Int {
        let lines = try String(contentsOfFile: file, encoding: .utf8).components(separatedBy: "\n")
        return try XCTUnwrap(lines.firstIndex { $0.contains(text) }, "\(text) in \(file)") + 1
    }

    /// A real aarch64 crash (a fault in a shared library called from main) under emulation:
    /// `faultline symbolicate REPORT` names both user functions with the lines of the fault and of
    /// the call, as llvm-symbolizer does for the same call sites (return address − 4).
    func testAnEmulatedAarch64CrashReportNamesTheUsersFunctionsAndLines() throws {
        let programs = directory + "/programs", crashes = directory + "/crashes"
        let crasher = try Aarch64Emulation.buildCrasher(in: programs)
        let outcome = try Aarch64Emulation.run(crasher, ["library"], crashDirectory: crashes)
        XCTAssertEqual(outcome.signal, SIGSEGV, outcome.description)
        let reportPath = try XCTUnwrap(TestSupport.files(in: crashes, suffix: ".crash.json").first, "a report in \(crashes)")
        let report = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: reportPath)))
        XCTAssertEqual(report.architecture, .aarch64)

        let r = faultlineSymbolicate([reportPath])
        // 4: partial, since libc's start-up frames have no symbols here (stripped arm64 libc, no system debug files).
        XCTAssertTrue([0, 4].contains(r.status), "exit \(r.status): \(r.stderr)")
        let sources = Aarch64Emulation.probeSources
        let faultLine = try line(of: "*where = 7", in: sources + "/crash_library.c")
        let callLine = try line(of: "library_fault((volatile int *)32)", in: sources + "/crasher.c")
        let text = r.stdout
        XCTAssertTrue(text.contains("#0  "), text)
        XCTAssertTrue(text.contains(" in library_fault at \(sources)/crash_library.c:\(faultLine):"), text)
        XCTAssertTrue(text.contains(" in main at \(sources)/crasher.c:\(callLine):"), text)

        // Each user frame as llvm-symbolizer names its call site in the module's own file (those
        // with a source line: _start, from the C runtime's object, has only its symbol).
        var compared = 0
        for frame in report.frames {
            let lookup = frame.lookupAddress(on: report.architecture)
            guard let module = report.modules.first(where: { $0.contains(lookup) }), module.path.hasPrefix(programs) else { continue }
            let info = try ELFInfo.read(path: module.path)
            let vaddr = lookup.value - module.base.value + info.firstLoadAddress
            let record = try XCTUnwrap(parseLLVMOutput(try llvmSymbolizer(module.path, Data("0x\(String(vaddr, radix: 16))\n".utf8))).first)
            let innermost = try XCTUnwrap(record.first)
            guard !innermost.location.hasPrefix("??") else {
                XCTAssertTrue(text.contains(" in \(innermost.function) "), "\(innermost) in\n\(text)")
                continue
            }
            XCTAssertTrue(text.contains(" in \(innermost.function) at \(innermost.location) "), "\(innermost) in\n\(text)")
            compared += 1
        }
        XCTAssertEqual(compared, 2, "library_fault's and main's frames")
    }
}
