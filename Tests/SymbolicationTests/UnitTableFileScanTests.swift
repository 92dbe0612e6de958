// The lazy path's pread unit scan (UnitTableFileScan.swift) must give exactly the unit table the
// libdw scan gives, and must give up (nil) rather than guess on what it does not model.
import Foundation
import XCTest
@testable import FaultlineSymbolication

final class UnitTableFileScanTests: XCTestCase {
    /// Both scans of `path`; `modelled` says the pread scan must not give up on it.
    func assertScansAgree(_ path: String, modelled: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        let handle = try ELFHandle(path: path)
        let libdw = UnitTable.scan(handle.elf)
        let pread = UnitTable.scanWithoutMapping(handle)
        if modelled {
            XCTAssertNotNil(pread, "\(path): the pread scan gave up", file: file, line: line)
            XCTAssertNotNil(libdw, "\(path): libdw found no units", file: file, line: line)
        }
        // Giving up is always allowed (libdw then scans); a table must be libdw's, field by field.
        if let pread { XCTAssertEqual(pread, libdw, "\(path): the two scans differ", file: file, line: line) }
        // What the lazy path uses is libdw's table in every case.
        XCTAssertEqual(UnitTable.scan(handle), libdw, "\(path)", file: file, line: line)
    }

    func testFixtureVariantsAgreeWithLibdw() throws {
        let d = try Fixtures.directory()
        for base in try Fixtures.bases() {
            // GCC's units are read with pread; clang's DWARF 5 (addrx) and swiftc's (skeleton units
            // for Clang modules) are left to libdw.
            let gcc = base.hasPrefix("c-") && !base.contains("clang") || base.hasPrefix("cxx-")
            try assertScansAgree("\(d)/\(base).full", modelled: gcc)
            try assertScansAgree("\(d)/\(base).debug", modelled: gcc)
            // Compressed sections cannot be read with pread: libdw's scan.
            for variant in ["zlib", "zgnu"] {
                let handle = try ELFHandle(path: "\(d)/\(base).\(variant)")
                XCTAssertNil(UnitTable.scanWithoutMapping(handle), "\(base).\(variant)")
                try assertScansAgree("\(d)/\(base).\(variant)", modelled: false)
            }
        }
    }

    func testSplitAndSupplementaryFilesAgreeWithLibdw() throws {
        let d = try Fixtures.directory()
        try assertScansAgree("\(d)/split/nosplit/a", modelled: true)
        // Skeleton units: the pread scan leaves the file to libdw.
        for v in ["dwo", "dwo4"] {
            XCTAssertNil(UnitTable.scanWithoutMapping(try ELFHandle(path: "\(d)/split/\(v)/a")), v)
            try assertScansAgree("\(d)/split/\(v)/a", modelled: false)
        }
        try assertScansAgree("\(d)/supplementary/orig/a", modelled: true)
        for v in ["abs", "rel", "sup5"] { try assertScansAgree("\(d)/supplementary/\(v)/a", modelled: false) }
    }

    /// DWARF 2-5, 64-bit DWARF, .debug_ranges and .debug_rnglists (-ffunction-sections gives a unit
    /// several ranges; --gc-sections leaves tombstones), C++, clang DWARF 4 and 5.
    func testCompilerVariantsAgreeWithLibdw() throws {
        let dir = Fixtures.temporaryDirectory("unit-scan-variants")
        let src = Fixtures.sourceDir
        let clang = (Fixtures.llvmSymbolizer.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path + "/clang" }) ?? "/opt/swift/usr/bin/clang"
        let unused = dir + "/unused.c"
        try "int fl_unused(int x) { return x * 3; }\nint fl_used(int x) { return x + 1; }\n".write(toFile: unused, atomically: true, encoding: .utf8)
        var builds: [(String, [String], Bool)] = []
        for v in ["-gdwarf-2", "-gdwarf-3", "-gdwarf-4", "-gdwarf-5"] {
            builds.append(("gcc", ["-g", v, "-O2", "\(src)/inline_chain.c", unused], true))
            builds.append(("gcc", ["-g", v, "-O2", "-ffunction-sections", "\(src)/inline_chain.c", unused], true))
        }
        builds += [
            ("gcc", ["-g", "-gdwarf-5", "-O2", "-gdwarf64", "-ffunction-sections", "\(src)/inline_chain.c"], true),
            ("gcc", ["-g", "-gdwarf-4", "-O3", "-ffunction-sections", "-Wl,--gc-sections", "\(src)/inline_chain.c", unused], true),
            ("gcc", ["-g", "-gdwarf-5", "-O3", "-ffunction-sections", "-Wl,--gc-sections", "\(src)/inline_chain.c", unused], true),
            ("g++", ["-g", "-O2", "-ffunction-sections", "\(src)/templates.cpp"], true),
            (clang, ["-g", "-gdwarf-4", "-O2", "-ffunction-sections", "\(src)/inline_chain.c", unused], true),
            // clang's DWARF 5 names unit addresses through .debug_addr (addrx, rnglistx): libdw's scan.
            (clang, ["-g", "-gdwarf-5", "-O2", "-ffunction-sections", "-Wl,--gc-sections", "\(src)/inline_chain.c", unused], false)
        ]
        for (i, (cc, args, modelled)) in builds.enumerated() {
            let out = "\(dir)/v\(i)"
            let exe = cc.hasPrefix("/") ? cc : "/usr/bin/\(cc)"
            let r = Fixtures.run(exe, args + ["-o", out])
            XCTAssertEqual(r.status, 0, "\(cc) \(args): \(r.stderr)")
            guard r.status == 0 else { continue }
            try assertScansAgree(out, modelled: modelled)
        }
    }

    func testPythonLibraryAgreesWithLibdw() throws {
        let lib = try XCTUnwrap(LineTableReaderTests.libpython, "libpython (the Python shared library) not found")
        try assertScansAgree(lib, modelled: true)
    }

    /// A file whose .debug_info is cut short, or whose unit header claims more bytes than the
    /// section has, is left to libdw (nil), never read past its end.
    func testTruncatedDebugInfoIsLeftToLibdw() throws {
        let d = try Fixtures.directory()
        let base = try XCTUnwrap(try Fixtures.bases().first)
        let dir = Fixtures.temporaryDirectory("unit-scan-truncated")
        let info = dir + "/info"
        let r = Fixtures.run("/usr/bin/objcopy", ["--dump-section", ".debug_info=\(info)", "\(d)/\(base).full", dir + "/copy"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: info))
        bytes.append(contentsOf: [0x40, 0, 0, 0, 5, 0])  // a unit header announcing 64 bytes that are not there
        try bytes.write(to: URL(fileURLWithPath: info))
        let out = dir + "/truncated"
        let u = Fixtures.run("/usr/bin/objcopy", ["--update-section", ".debug_info=\(info)", "\(d)/\(base).full", out])
        XCTAssertEqual(u.status, 0, u.stderr)
        XCTAssertNil(UnitTable.scanWithoutMapping(try ELFHandle(path: out)))
    }
}
