// A partial build reads its units through a view of .debug_info that starts at the first of them
// (DebugInfoView.swift). Each unit built that way must answer what the full index answers, and a
// unit that refers outside itself by a section offset (dwz's partial units) must be refused and
// built from the file instead, with the same answers.
import Foundation
import XCTest
import CDw
@testable import FaultlineSymbolication

final class DebugInfoViewTests: XCTestCase {
    /// Each unit's offset and its abbreviation table's offset, read through libdw from the file.
    func units(_ debug: ELFHandle) throws -> [(offset: UInt64, abbreviations: UInt64)] {
        let dwarf = try XCTUnwrap(DWARFSession.begin(debug.elf))
        defer { dwarf_end(dwarf) }
        var out: [(UInt64, UInt64)] = []
        var offset: Dwarf_Off = 0
        while true {
            var next: Dwarf_Off = 0
            var headerSize = 0
            var abbrev: Dwarf_Off = 0
            guard dwarf_next_unit(dwarf, offset, &next, &headerSize, nil, &abbrev, nil, nil, nil, nil) == 0, next > offset else { break }
            out.append((offset, abbrev))
            offset = next
        }
        return out
    }

    /// Every function byte each unit covers answers, from a partial build of that unit alone, what
    /// the full index answers. Returns how each unit's build alone used the view (first unit first).
    func assertEachUnitAgreesWithTheFullIndex(
        _ path: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> [IndexTables.ViewUse] {
        let debug = try ELFHandle(path: path)
        let table = try XCTUnwrap(UnitTable.scan(debug), path, file: file, line: line)
        let full = LoadedModule(index: try XCTUnwrap(DWARFIndex.inMemory(DWARFIndexBuilder.build(debugFile: debug, symbolSources: [debug]), buildID: nil)))
        let bytes = Fixtures.functionBytes(path)
        var uses: [IndexTables.ViewUse] = []
        for (offset, _) in try units(debug) {
            // dwz's partial unit holds no code: a unit without ranges is not looked up by address.
            guard let u = table.offsets.firstIndex(of: offset), !table.unranged.contains(u) else { continue }
            // The unit alone (its view is then tried first, whatever it refers to), and the units a
            // lookup in it parses: it and those without ranges, as `UnitTable.units(for:)`.
            let withUnranged = (table.unranged.map { table.offsets[$0] } + [offset]).sorted()
            var checked = 0
            for parsed in withUnranged == [offset] ? [[offset]] : [[offset], withUnranged] {
                let partial = DWARFIndexBuilder.build(debugFile: debug, symbolSources: [debug], units: parsed, symbolsForUnitsOnly: true)
                if parsed == [offset] { uses.append(partial.debugInfoView) }
                let module = LoadedModule(index: try XCTUnwrap(DWARFIndex.inMemory(partial, buildID: nil)))
                for a in bytes {
                    var covering = Set<Int>()
                    table.units(covering: a, into: &covering)
                    guard covering == [u] else { continue }
                    checked += 1
                    XCTAssertEqual(
                        module.frames(at: a), full.frames(at: a), "\(path) units \(parsed) address 0x\(String(a, radix: 16))", file: file, line: line)
                }
            }
            XCTAssertGreaterThan(checked, 0, "\(path): unit 0x\(String(offset, radix: 16)) covers no function byte", file: file, line: line)
        }
        return uses
    }

    func testEveryUnitOfAMultiUnitLibraryIsBuiltThroughTheView() throws {
        let lib = try LazyColdPathTests.multiUnitLibrary.get()
        let debug = try ELFHandle(path: lib)
        let all = try units(debug)
        XCTAssertEqual(all.count, 8)
        XCTAssertNil(DebugInfoView(debug, base: 0), "the first unit needs no view")
        for (offset, abbreviations) in all.dropFirst() {
            let view = try XCTUnwrap(DebugInfoView(debug, base: offset))
            XCTAssertTrue(view.refersOnlyWithinItself(abbreviationsAt: abbreviations), "unit 0x\(String(offset, radix: 16))")
        }
        let uses = try assertEachUnitAgreesWithTheFullIndex(lib)
        XCTAssertEqual(uses, [.notTried] + Array(repeating: .used, count: 7), "every unit after the first is read through the view")
    }

    /// dwz moves the DIEs several units share (a struct, an inline function's abstract instance)
    /// into a partial unit, which each unit imports and whose function its inlined frames name, by
    /// DW_FORM_ref_addr: those units are refused by the view and built from the file.
    func testUnitsThatReferBySectionOffsetAreBuiltFromTheFile() throws {
        let dir = Fixtures.temporaryDirectory("debug-info-view-dwz")
        let header = "\(dir)/shared.h"
        try """
        struct fl_shared_record { int id; long total; const char *name; double weights[4]; struct fl_shared_record *next; };
        typedef int (*fl_shared_callback)(struct fl_shared_record *, int);
        static inline __attribute__((always_inline)) int fl_shared_weight(struct fl_shared_record *r, int k) {
            return (int)(r->weights[k & 3] * 2) + r->id;
        }
        """.write(toFile: header, atomically: true, encoding: .utf8)
        var sources: [String] = []
        for u in 0..<4 {
            let path = "\(dir)/part\(u).c"
            try """
            #include "shared.h"
            __attribute__((noinline)) int part\(u)_sum(struct fl_shared_record *r, fl_shared_callback f) {
                int s = 0;
                for (; r; r = r->next) s += f(r, \(u)) + fl_shared_weight(r, \(u)) + (int)r->total;
                return s;
            }

            """.write(toFile: path, atomically: true, encoding: .utf8)
            sources.append(path)
        }
        let lib = "\(dir)/libparts.so"
        let cc = Fixtures.run("/usr/bin/cc", ["-shared", "-fPIC", "-g", "-O2", "-o", lib] + sources)
        XCTAssertEqual(cc.status, 0, cc.stderr)
        let dwz = Fixtures.run("/usr/bin/dwz", [lib])
        XCTAssertEqual(dwz.status, 0, dwz.stderr)
        let abbrev = Fixtures.run("/usr/bin/readelf", ["--debug-dump=abbrev", lib])
        XCTAssertTrue(abbrev.stdout.contains("DW_FORM_ref_addr"), "dwz made no cross-unit reference; the test needs one")
        let debug = try ELFHandle(path: lib)
        for (offset, abbreviations) in try units(debug).dropFirst() {
            let view = try XCTUnwrap(DebugInfoView(debug, base: offset))
            XCTAssertFalse(view.refersOnlyWithinItself(abbreviationsAt: abbreviations), "unit 0x\(String(offset, radix: 16))")
        }
        let uses = try assertEachUnitAgreesWithTheFullIndex(lib)
        XCTAssertEqual(uses, Array(repeating: .refused, count: 4), "every unit imports the partial unit: each view is refused")
        // And what the index answers is llvm-symbolizer's, inlined frames included: the partial
        // unit names the first unit's line table, and claimed that unit's addresses from it.
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer)
        let bytes = Fixtures.functionBytes(lib)
        let text = bytes.map { "0x" + String($0, radix: 16) }.joined(separator: "\n")
        let s = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        var sym = try LLVMStyleSymbolizer(objectFile: lib, symbolicator: s)
        sym.demangle = false
        var out: [UInt8] = []
        let input = Array(text.utf8)
        _ = input.withUnsafeBytes { sym.run(input: $0, output: &out) }
        let expected = Fixtures.run(llvm, ["--obj=\(lib)", "--inlines", "--no-demangle"], stdin: Data((text + "\n").utf8))
        XCTAssertEqual(String(decoding: out, as: UTF8.self), expected.stdout)
        XCTAssertTrue(expected.stdout.contains("fl_shared_weight"), "the fixture has inlined frames")
    }

    /// The abbreviation reader on tables written by hand: what libdw could read as a reference by
    /// section offset, or could read differently, is refused; nothing in a hostile table traps.
    func testAbbreviationTablesAreReadAsLibdwReadsThemOrRefused() {
        func accepts(_ bytes: [UInt8], at offset: UInt64 = 0) -> Bool {
            bytes.withUnsafeBytes { DebugInfoView.refersOnlyWithinItself($0, at: offset) }
        }
        let compileUnit: [UInt8] = [0x01, 0x11, 0x01, 0x03, 0x0e, 0x25, 0x0e]  // code 1, DW_TAG_compile_unit, children; name strp, producer strp
        XCTAssertTrue(accepts([0x00]), "an empty table")
        XCTAssertTrue(accepts(compileUnit + [0x00, 0x00, 0x00]))
        XCTAssertTrue(accepts([0xff] + compileUnit + [0x00, 0x00, 0x00], at: 1), "a table at an offset")
        XCTAssertFalse(accepts(compileUnit + [0x49, 0x10, 0x00, 0x00, 0x00]), "DW_AT_type by DW_FORM_ref_addr")
        XCTAssertFalse(accepts(compileUnit + [0x49, 0x20, 0x00, 0x00, 0x00]), "DW_FORM_ref_sig8")
        XCTAssertFalse(accepts(compileUnit + [0x49, 0x16, 0x00, 0x00, 0x00]), "DW_FORM_indirect")
        // 2^32 + 0x10: libdw keeps the low 32 bits, DW_FORM_ref_addr.
        XCTAssertFalse(accepts(compileUnit + [0x49, 0x90, 0x80, 0x80, 0x80, 0x10, 0x00, 0x00, 0x00]))
        // 2^63: no trap; its low 32 bits are zero, a pair libdw may take as the entry's end.
        XCTAssertFalse(accepts(compileUnit + [0x49, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00, 0x00, 0x00]))
        // A number longer than 64 bits, a table cut short, an offset past the section.
        XCTAssertFalse(accepts(compileUnit + [0x49, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x00, 0x00]))
        XCTAssertFalse(accepts(compileUnit + [0x49]))
        XCTAssertFalse(accepts(compileUnit))
        XCTAssertFalse(accepts([0x00], at: 1))
        // DW_FORM_implicit_const carries its value in the table (a SLEB128, here -2): skipped.
        XCTAssertTrue(accepts(compileUnit + [0x3a, 0x21, 0x7e, 0x00, 0x00, 0x00]))
        XCTAssertFalse(accepts(compileUnit + [0x3a, 0x21, 0x7e, 0x49, 0x10, 0x00, 0x00, 0x00]), "a reference after it is still seen")
    }

    /// A unit whose length points past the end of the address space (64-bit DWARF, an uploaded
    /// file): the walk through the view stops there instead of overflowing its offsets.
    func testAUnitLengthNearTheTopOfTheAddressSpaceStopsTheWalk() throws {
        let lib = try LazyColdPathTests.multiUnitLibrary.get()
        let last = try XCTUnwrap(try units(ELFHandle(path: lib)).last)
        let info = try XCTUnwrap(try ELFHandle(path: lib).sections().first { $0.name == ".debug_info" })
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: lib)))
        // A DWARF 5 header in its 64-bit form: 0xffffffff, an 8-byte length, version, unit type,
        // address size, an 8-byte abbreviation offset (the unit's own).
        var header: [UInt8] = [0xff, 0xff, 0xff, 0xff]
        withUnsafeBytes(of: UInt64(0xffff_ffff_ffff_ff00).littleEndian) { header += $0 }
        header += [0x05, 0x00, 0x01, 0x08]
        withUnsafeBytes(of: last.abbreviations.littleEndian) { header += $0 }
        let at = Int(info.header.sh_offset + last.offset)
        bytes.replaceSubrange(at..<(at + header.count), with: header)
        let hostile = Fixtures.temporaryDirectory("debug-info-view-length") + "/libunits.so"
        try Data(bytes).write(to: URL(fileURLWithPath: hostile))
        let debug = try ELFHandle(path: hostile)
        let partial = DWARFIndexBuilder.build(debugFile: debug, symbolSources: [debug], units: [last.offset], symbolsForUnitsOnly: true)
        XCTAssertNotEqual(partial.debugInfoView, .notTried, "the view is tried for a unit after the first")
        XCTAssertTrue(partial.cuLow.isEmpty, "a unit that cannot be read gives no address range")
    }
}
