// Our .debug_line reader (LineTable.swift) against libdw's, unit by unit, on binaries built at
// test time: the index built with it must equal the index built with libdw's line tables, row
// for row and path for path, and a corrupt line table must neither crash nor answer differently.
import Foundation
import XCTest
@testable import FaultlineSymbolication

final class LineTableReaderTests: XCTestCase {
    /// The tables line reading fills, with file numbers resolved to their paths.
    struct LineView: Equatable {
        var unitRows: [[UInt32]] = []
        var address: [UInt64] = []
        var file: [String] = []
        var line: [UInt32] = []
        var column: [UInt32] = []
        var callFile: [String] = []
        var scopeCount = 0
    }

    static func view(_ b: DWARFIndexBuilder) -> LineView {
        let bytes = b.pool.bytes
        func string(_ file: UInt32) -> String {
            guard file != IndexTables.none else { return "<none>" }
            let off = Int(b.t.files[Int(file)])
            let end = bytes[off...].firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[off..<end], as: UTF8.self)
        }
        var v = LineView()
        v.unitRows = zip(b.t.cuRowStart, b.t.cuRowEnd).map { [$0, $1] }
        v.address = b.t.rowAddress
        v.file = b.t.rowFile.map(string)
        v.line = b.t.rowLine
        v.column = b.t.rowColumn
        v.callFile = b.t.scopeCallFile.map(string)
        v.scopeCount = b.t.scopeName.count
        return v
    }

    /// Walks every unit of `path` twice (our reader, then libdw only) and returns both builders.
    static func walkBoth(_ path: String, supplementary: String? = nil) throws -> (own: DWARFIndexBuilder, libdw: DWARFIndexBuilder) {
        let h = try ELFHandle(path: path)
        var own = DWARFIndexBuilder()
        _ = own.walkUnits(h.elf, only: nil, supplementary: SupplementaryDwarf.opening(supplementary), releasePages: false)
        var libdw = DWARFIndexBuilder()
        libdw.readsLineTables = false
        _ = libdw.walkUnits(h.elf, only: nil, supplementary: SupplementaryDwarf.opening(supplementary), releasePages: false)
        return (own, libdw)
    }

    /// The first difference between the two views, for a readable failure.
    static func firstDifference(_ a: LineView, _ b: LineView) -> String? {
        if a == b { return nil }
        if a.unitRows != b.unitRows {
            let i = Array(zip(a.unitRows, b.unitRows)).firstIndex { $0.0 != $0.1 } ?? min(a.unitRows.count, b.unitRows.count)
            return "unit \(i) rows \(i < a.unitRows.count ? a.unitRows[i] : []) vs libdw \(i < b.unitRows.count ? b.unitRows[i] : [])"
        }
        if a.address.count != b.address.count { return "\(a.address.count) rows vs libdw \(b.address.count)" }
        for i in a.address.indices where a.address[i] != b.address[i] || a.file[i] != b.file[i] || a.line[i] != b.line[i] || a.column[i] != b.column[i] {
            return
                "row \(i): 0x\(String(a.address[i], radix: 16)) \(a.file[i]):\(a.line[i]):\(a.column[i]) vs libdw 0x\(String(b.address[i], radix: 16)) \(b.file[i]):\(b.line[i]):\(b.column[i])"
        }
        if let i = Array(zip(a.callFile, b.callFile)).firstIndex(where: { $0.0 != $0.1 }) {
            return "scope \(i) call file \(a.callFile[i]) vs libdw \(b.callFile[i])"
        }
        return "scope count \(a.scopeCount) vs libdw \(b.scopeCount)"
    }

    /// Asserts equal views; `plain`: every unit must have been read by our reader, none by libdw.
    func assertAgrees(_ path: String, plain: Bool, supplementary: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let (own, libdw) = try Self.walkBoth(path, supplementary: supplementary)
        let a = Self.view(own), b = Self.view(libdw)
        XCTAssertNil(Self.firstDifference(a, b), path, file: file, line: line)
        XCTAssertGreaterThan(b.address.count, 0, "\(path): libdw read no rows", file: file, line: line)
        XCTAssertEqual(libdw.lineTableUnits.own, 0, file: file, line: line)
        if plain {
            XCTAssertGreaterThan(own.lineTableUnits.own, 0, "\(path): our reader read no unit", file: file, line: line)
            XCTAssertEqual(own.lineTableUnits.libdw, 0, "\(path): units left to libdw", file: file, line: line)
        }
    }

    static let libpython: String? = {
        var candidates = ["/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"]
        let r = Fixtures.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sysconfig,os; print(os.path.join(sysconfig.get_config_var('LIBDIR') or '', sysconfig.get_config_var('INSTSONAME') or ''))"
            ])
        if r.status == 0 { candidates.append(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }()

    // MARK: Agreement

    func testEveryFixtureVariantAgreesWithLibdw() throws {
        let d = try Fixtures.directory()
        for base in try Fixtures.bases() {
            // Compressed variants: libdw inflates the sections in place; our reader reads them after it.
            for variant in ["full", "zlib", "zgnu", "debug"] { try assertAgrees("\(d)/\(base).\(variant)", plain: true) }
        }
    }

    func testSplitAndSupplementaryFilesAgreeWithLibdw() throws {
        let d = try Fixtures.directory()
        try assertAgrees("\(d)/split/nosplit/a", plain: true)
        // Skeleton units go to libdw; the rest of the file is ours.
        try assertAgrees("\(d)/split/dwo/a", plain: false)
        try assertAgrees("\(d)/split/dwo4/a", plain: false)
        try assertAgrees("\(d)/supplementary/orig/a", plain: true)
        for v in ["abs", "rel", "sup5"] {
            try assertAgrees("\(d)/supplementary/\(v)/a", plain: false, supplementary: "\(d)/supplementary/\(v)/common.debug")
        }
    }

    /// Producers and options the fixtures do not cover: DWARF 2-5 line headers, 64-bit DWARF,
    /// one sequence per function (-ffunction-sections) and sequences of discarded functions
    /// (--gc-sections: address 0 or tombstones), DWARF 4 with clang.
    func testCompilerVariantsAgreeWithLibdw() throws {
        let dir = Fixtures.temporaryDirectory("line-variants")
        let src = Fixtures.sourceDir
        let clang = (Fixtures.llvmSymbolizer.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path + "/clang" }) ?? "/opt/swift/usr/bin/clang"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: clang), "clang beside llvm-symbolizer")
        let unused = dir + "/unused.c"
        try "int fl_unused(int x) { return x * 3; }\nint fl_used(int x) { return x + 1; }\n".write(toFile: unused, atomically: true, encoding: .utf8)
        var builds: [(String, [String])] = []
        for v in ["-gdwarf-2", "-gdwarf-3", "-gdwarf-4", "-gdwarf-5"] {
            builds.append(("gcc", ["-g", v, "-O2", "\(src)/inline_chain.c"]))
        }
        builds += [
            ("gcc", ["-g", "-gdwarf-5", "-O2", "-gdwarf64", "\(src)/inline_chain.c"]),
            ("gcc", ["-g", "-gdwarf-4", "-O3", "-ffunction-sections", "-Wl,--gc-sections", "\(src)/inline_chain.c", unused]),
            ("gcc", ["-g", "-gdwarf-5", "-O3", "-ffunction-sections", "-Wl,--gc-sections", "\(src)/inline_chain.c", unused]),
            ("gcc", ["-g3", "-O1", "\(src)/inline_chain.c"]),
            ("g++", ["-g", "-gdwarf-4", "-O2", "\(src)/templates.cpp"]),
            ("g++", ["-g", "-O2", "-ffunction-sections", "\(src)/templates.cpp"]),
            (clang, ["-g", "-gdwarf-4", "-O2", "\(src)/inline_chain.c"]),
            (clang, ["-g", "-gdwarf-5", "-O2", "-ffunction-sections", "-Wl,--gc-sections", "\(src)/inline_chain.c", unused]),
            (clang, ["-g", "-gdwarf-4", "-O0", "\(src)/inline_chain.c"])
        ]
        for (i, (cc, args)) in builds.enumerated() {
            let out = "\(dir)/v\(i)"
            let exe = cc.hasPrefix("/") ? cc : "/usr/bin/\(cc)"
            let r = Fixtures.run(exe, args + ["-o", out])
            XCTAssertEqual(r.status, 0, "\(cc) \(args): \(r.stderr)")
            guard r.status == 0 else { continue }
            try assertAgrees(out, plain: true)
        }
    }

    func testPythonLibraryAgreesWithLibdw() throws {
        let lib = try XCTUnwrap(Self.libpython, "libpython (the Python shared library) not found")
        try assertAgrees(lib, plain: true)
    }

    /// Opcodes and header forms compilers rarely emit, in hand-made line tables put into a real
    /// binary (objcopy --update-section): DWARF 3, 4 and 5 headers, 32- and 64-bit, MD5 and size
    /// fields, DW_LNS_const_add_pc / fixed_advance_pc / negate_stmt / set_isa, a discriminator,
    /// unknown extended and standard opcodes, file 0, a file number out of range, duplicate rows,
    /// sequences out of address order and one starting where another ends.
    func testHandMadeLineTablesAgreeWithLibdw() throws {
        let dir = Fixtures.temporaryDirectory("line-handmade")
        try "int main(void) { return 0; }\n".write(toFile: dir + "/m.c", atomically: true, encoding: .utf8)
        let exe = dir + "/m"
        let r = Fixtures.run("/usr/bin/gcc", ["-g", "-O0", dir + "/m.c", "-o", exe])
        XCTAssertEqual(r.status, 0, r.stderr)
        for (version, dwarf64) in [(3, false), (4, false), (4, true), (5, false), (5, true)] {
            let table = dir + "/line-\(version)-\(dwarf64)"
            try Data(Self.handMadeLineTable(version: version, dwarf64: dwarf64)).write(to: URL(fileURLWithPath: table))
            let out = "\(exe)-\(version)-\(dwarf64)"
            let o = Fixtures.run("/usr/bin/objcopy", ["--update-section", ".debug_line=\(table)", exe, out])
            XCTAssertEqual(o.status, 0, o.stderr)
            try assertAgrees(out, plain: true)
            let (own, _) = try Self.walkBoth(out)
            XCTAssertEqual(own.t.rowAddress.count, 15, "every row of the hand-made table (version \(version))")
        }
    }

    static func handMadeLineTable(version: Int, dwarf64: Bool) -> [UInt8] {
        var h: [UInt8] = []
        func uleb(_ v: UInt64, into b: inout [UInt8]) {
            var v = v
            repeat { var byte = UInt8(v & 0x7f); v >>= 7; if v != 0 { byte |= 0x80 }; b.append(byte) } while v != 0
        }
        func sleb(_ v: Int64, into b: inout [UInt8]) {
            var v = v
            while true {
                let byte = UInt8(v & 0x7f); v >>= 7
                if (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0) { b.append(byte); return }
                b.append(byte | 0x80)
            }
        }
        func le(_ v: UInt64, _ n: Int, into b: inout [UInt8]) { for i in 0..<n { b.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        func cstr(_ s: String, into b: inout [UInt8]) { b += Array(s.utf8) + [0] }
        // min_inst 1, max_ops 1 (v4+), is_stmt 1, line_base -5, line_range 14, opcode_base 14:
        // standard opcode 13 is unknown to the reader and takes two ULEB128 operands.
        h += [1]
        if version >= 4 { h += [1] }
        h += [1, 0xfb, 14, 14, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2]
        if version < 5 {
            cstr("src", into: &h); cstr("/abs", into: &h); h.append(0)
            for (name, d) in [("a.c", 1), ("b.c", 2), ("/x/c.c", 0), ("d.c", 0)] {
                cstr(name, into: &h); uleb(UInt64(d), into: &h); uleb(0, into: &h); uleb(0, into: &h)
            }
            h.append(0)
        } else {
            h += [1]; uleb(1, into: &h); uleb(0x08, into: &h)  // path: string
            uleb(3, into: &h); for d in ["/comp", "src", "/abs"] { cstr(d, into: &h) }
            h += [4]
            for (c, f) in [(1, 0x08), (2, 0x0f), (5, 0x1e), (4, 0x0f)] { uleb(UInt64(c), into: &h); uleb(UInt64(f), into: &h) }
            uleb(4, into: &h)
            for (name, d) in [("a.c", 1), ("b.c", 2), ("/x/c.c", 0), ("d.c", 0)] {
                cstr(name, into: &h); uleb(UInt64(d), into: &h); h += [UInt8](repeating: 0xab, count: 16); uleb(1234, into: &h)
            }
        }
        var p: [UInt8] = []
        func setAddress(_ a: UInt64) { p += [0, 9, 2]; le(a, 8, into: &p) }
        func special(line: Int, address: Int) { p.append(UInt8((line + 5) + 14 * address + 14)) }
        setAddress(0x1000)
        p.append(4); uleb(2, into: &p)  // set_file 2
        p.append(3); sleb(10, into: &p)  // advance_line
        p.append(1); p.append(1)  // copy twice: duplicate rows
        special(line: 3, address: 2)
        p.append(8); special(line: -2, address: 1)  // const_add_pc
        p.append(9); le(0x0123, 2, into: &p); p.append(1)  // fixed_advance_pc
        p += [0, 2, 4, 5]; special(line: 0, address: 3)  // discriminator 5
        p.append(6); p.append(5); uleb(7, into: &p); special(line: 1, address: 1)  // negate_stmt, column 7
        p += [0, 4, 0x80, 1, 2, 3]  // unknown extended opcode
        p += [13, 0x81, 0x01, 5]  // unknown standard opcode
        p += [10, 11, 7, 12, 3]  // prologue, epilogue, block, isa 3
        p.append(4); uleb(0, into: &p); special(line: 1, address: 1)  // file 0
        p.append(4); uleb(9, into: &p); special(line: 1, address: 1)  // no file 9
        p.append(3); sleb(-20, into: &p); p.append(2); uleb(0x40, into: &p)
        p += [0, 1, 1]  // end_sequence
        setAddress(0x800)  // below the first
        p.append(4); uleb(3, into: &p); p.append(1); special(line: 1, address: 1)
        p.append(2); uleb(4, into: &p); p += [0, 1, 1]  // ends at 0x805
        setAddress(0x805)  // starts where it ended
        p.append(4); uleb(4, into: &p); p.append(1); p.append(2); uleb(2, into: &p); p += [0, 1, 1]
        var afterLength: [UInt8] = []
        le(UInt64(version), 2, into: &afterLength)
        if version >= 5 { afterLength += [8, 0] }
        le(UInt64(h.count), dwarf64 ? 8 : 4, into: &afterLength)
        afterLength += h + p
        var unit: [UInt8] = []
        if dwarf64 { unit += [0xff, 0xff, 0xff, 0xff]; le(UInt64(afterLength.count), 8, into: &unit) } else { le(UInt64(afterLength.count), 4, into: &unit) }
        return unit + afterLength
    }

    // MARK: Corrupt input

    /// Deterministic corruptions of .debug_line (bytes overwritten, lengths and counts made huge,
    /// the section cut short): no crash, no endless loop, and whatever our reader accepts it must
    /// read as libdw does (what it rejects, libdw reads).
    func testCorruptLineTablesNeverCrashAndStillAgree() throws {
        let d = try Fixtures.directory()
        let dir = Fixtures.temporaryDirectory("line-corrupt")
        for base in ["c-O2", "c-dwarf4-O2"] {
            let path = "\(d)/\(base).full"
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            let h = try ELFHandle(path: path)
            let section = try XCTUnwrap(h.sections().first { $0.name == ".debug_line" })
            let start = Int(section.header.sh_offset), size = Int(section.header.sh_size)
            var rng = SplitMix64(state: 16)
            var acceptedCorrupt = 0
            for k in 0..<120 {
                var bytes = [UInt8](original)
                switch k % 4 {
                case 0:  // one byte anywhere in the section
                    bytes[start + Int(rng.next() % UInt64(size))] = UInt8(truncatingIfNeeded: rng.next())
                case 1:  // a run of bytes in the first header (lengths, counts, forms)
                    let at = start + Int(rng.next() % UInt64(min(size, 64)))
                    for j in 0..<4 where at + j < start + size { bytes[at + j] = 0xff }
                case 2:  // a unit length or header length pointing far beyond the section
                    let at = start + (k % 8 == 2 ? 0 : 6 + Int(rng.next() % 6))
                    bytes[at] = 0xfe; bytes[at + 1] = 0xff; bytes[at + 2] = 0xff; bytes[at + 3] = 0x7f
                default:  // the section cut short: its tail zeroed (the header still claims it)
                    let keep = Int(rng.next() % UInt64(size))
                    for j in keep..<size { bytes[start + j] = 0 }
                }
                let file = "\(dir)/\(base)-\(k)"
                try Data(bytes).write(to: URL(fileURLWithPath: file))
                let (own, libdw) = try Self.walkBoth(file)
                XCTAssertNil(Self.firstDifference(Self.view(own), Self.view(libdw)), "\(base) corruption \(k)")
                if own.lineTableUnits.own > 0 { acceptedCorrupt += 1 }
            }
            XCTAssertGreaterThan(acceptedCorrupt, 0, "some corruptions leave tables our reader reads")
        }
    }

    /// A line table that ends in the middle of an opcode is left to libdw, not read past its end.
    func testTruncatedProgramIsLeftToLibdw() throws {
        var rows: [LineRow] = []
        // DWARF 4 header, no directories or files, then DW_LNE_set_address cut after 3 bytes.
        var unit: [UInt8] = [4, 0]  // version
        let header: [UInt8] = [1, 1, 1, 0xfb, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0]
        unit += [UInt8(header.count), 0, 0, 0] + header
        unit += [0, 9, 2, 0x10, 0x20, 0x30]
        let bytes = [UInt8(unit.count), 0, 0, 0] + unit
        let table = bytes.withUnsafeBytes { b in
            LineTableReader.read(LineSections(line: b), offset: 0, addressSize: 8, compDir: nil, rows: &rows)
        }
        XCTAssertNil(table)
        // The same unit with the whole address, a row, an advance and the end of the sequence reads.
        // 0x21: special opcode 33 - 13 = 20: line += -5 + 20 % 14, address += 20 / 14.
        var whole = [UInt8](unit.dropLast(6)) + [0, 9, 2, 0x10, 0x20, 0x30, 0x40, 0, 0, 0, 0, 0x21, 2, 4, 0, 1, 1]
        whole = [UInt8(whole.count), 0, 0, 0] + whole
        let table2 = whole.withUnsafeBytes { b in
            LineTableReader.read(LineSections(line: b), offset: 0, addressSize: 8, compDir: nil, rows: &rows)
        }
        XCTAssertEqual(table2?.count, 1, "file 0 only: libdw's placeholder")
        XCTAssertEqual(rows.map(\.address), [0x4030_2011, 0x4030_2015])
        XCTAssertEqual(rows.map(\.line), [2, 2], "the end row keeps the registers")
        XCTAssertEqual(rows.map(\.isEnd), [false, true])
    }
}
