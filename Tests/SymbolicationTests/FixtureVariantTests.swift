// One program, many variants: the same frames must come out of every way its debug info ships.
import Foundation
import XCTest
import FaultlineProtocol
import Synchronization
@testable import FaultlineSymbolication

final class FixtureVariantTests: XCTestCase {
    /// How a variant is handed to the symbolicator: the module path and a locator.
    struct Variant {
        var name: String
        var module: String
        var locator: DebugFileLocator
    }

    func variants(_ base: String) throws -> [Variant] {
        let d = try Fixtures.directory()
        let none = DebugFileLocator(searchSystem: false)
        return [
            Variant(name: "unstripped", module: "\(d)/\(base).full", locator: none),
            Variant(name: "zlib-compressed", module: "\(d)/\(base).zlib", locator: none),
            Variant(name: "zlib-gnu .zdebug", module: "\(d)/\(base).zgnu", locator: none),
            Variant(name: "stripped+debuglink", module: "\(d)/\(base).stripped", locator: none),
            Variant(
                name: "stripped+debug-dir", module: "\(d)/\(base).bare",
                locator: DebugFileLocator(debugDirectories: ["\(d)/debugdir"], searchSystem: false)),
            Variant(
                name: "stripped+explicit split file", module: "\(d)/\(base).bare",
                locator: DebugFileLocator(explicitFiles: ["\(d)/\(base).debug"], searchSystem: false))
        ]
    }

    func buildID(_ path: String) throws -> BuildID {
        let info = try ELFInfo.read(path: path)
        return try XCTUnwrap(info.buildID, "fixture \(path) has no build-id")
    }

    /// Symbolicates an ELF virtual address through the module-relative API the server uses.
    func frames(_ v: Variant, _ address: UInt64, isReturn: Bool = false) throws -> SymbolicationOutcome {
        let s = Symbolicator(locator: v.locator, indexCacheDirectory: nil, persistIndexes: false)
        let info = try ELFInfo.read(path: v.module)
        return s.symbolicate(
            buildID: info.buildID, modulePath: v.module,
            relativeAddress: address - info.firstLoadAddress + (isReturn ? 1 : 0), isReturnAddress: isReturn, architecture: .x86_64)
    }

    typealias Expected = [(function: String, line: Int)]

    func assertChain(
        _ outcome: SymbolicationOutcome, _ expected: Expected, file sourceFile: String,
        _ context: String, line: UInt = #line
    ) {
        guard case .resolved(let got) = outcome else { return XCTFail("\(context): unresolved \(outcome)", line: line) }
        let gotPairs = got.map { "\($0.function ?? "??") \(($0.file as NSString?)?.lastPathComponent ?? "??"):\($0.line ?? 0)" }
        let wantPairs = expected.map { "\($0.function) \(sourceFile):\($0.line)" }
        XCTAssertEqual(gotPairs, wantPairs, context, line: line)
        XCTAssertEqual(got.map(\.isInlined), expected.indices.map { $0 < expected.count - 1 }, "\(context): inlined flags", line: line)
    }

    // MARK: C, deep static inline chain (GCC -O0, GCC -O2, clang -O2 with DWARF 5 and no aranges)

    func testCInlineChainOnEveryVariant() throws {
        let src = "inline_chain.c"
        let deep: Expected = [
            ("level4", try Fixtures.line("c_level4", in: src)),
            ("level3", try Fixtures.line("c_call_level4", in: src)),
            ("level2", try Fixtures.line("c_call_level3", in: src)),
            ("level1", try Fixtures.line("c_call_level2", in: src)),
            ("entry_c", try Fixtures.line("c_call_level1", in: src))
        ]
        let outer: Expected = [("entry_c", try Fixtures.line("c_outer", in: src))]
        let bases = try Fixtures.bases().filter { $0.hasPrefix("c-") }
        XCTAssertGreaterThanOrEqual(bases.count, 2)
        for base in bases {
            let m = try Fixtures.markers(base)
            let level4 = try XCTUnwrap(m["c_level4"]), outerAddr = try XCTUnwrap(m["c_outer"])
            for v in try variants(base) {
                assertChain(try frames(v, level4), deep, file: src, "\(base) \(v.name) level4")
                assertChain(try frames(v, outerAddr), outer, file: src, "\(base) \(v.name) outer")
                // A return address one past the marker looks up the marker's instruction.
                assertChain(try frames(v, outerAddr, isReturn: true), outer, file: src, "\(base) \(v.name) return address")
            }
        }
    }

    func testNoDWARFFallsBackToSymbolTableAndSaysSo() throws {
        let d = try Fixtures.directory()
        let m = try Fixtures.markers("c-O2")
        let v = Variant(name: "nodwarf", module: "\(d)/c-O2.nodwarf", locator: DebugFileLocator(searchSystem: false))
        guard case .resolved(let got) = try frames(v, try XCTUnwrap(m["c_level4"])) else { return XCTFail("unresolved") }
        XCTAssertEqual(got.count, 1)
        XCTAssertEqual(got.first?.function, "entry_c")
        XCTAssertNil(got.first?.file)
        XCTAssertEqual(got.first?.fromSymbolTable, true)
    }

    func testZstdCompressedDWARFIsReportedAndFallsBackToSymbols() throws {
        let d = try Fixtures.directory()
        XCTAssertEqual(try ELFInfo.read(path: "\(d)/c-O2.zlib").debugCompression, "zlib")
        XCTAssertEqual(try ELFInfo.read(path: "\(d)/c-O2.zgnu").debugCompression, "zlib-gnu")
        XCTAssertNil(try ELFInfo.read(path: "\(d)/c-O2.full").debugCompression)
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "\(d)/c-O2.zstd"), "objcopy cannot write zstd")
        let info = try ELFInfo.read(path: "\(d)/c-O2.zstd")
        XCTAssertEqual(info.debugCompression, "zstd")
        XCTAssertTrue(info.hasUnreadableDebugInfo)
        let m = try Fixtures.markers("c-O2")
        let v = Variant(name: "zstd", module: "\(d)/c-O2.zstd", locator: DebugFileLocator(searchSystem: false))
        guard case .resolved(let got) = try frames(v, try XCTUnwrap(m["c_level4"])) else { return XCTFail("unresolved") }
        XCTAssertEqual(got.map(\.function), ["entry_c"])
        XCTAssertEqual(got.first?.fromSymbolTable, true)
        // With the split debug file in a debug directory, the readable DWARF is found instead.
        let withDir = Variant(
            name: "zstd+dir", module: "\(d)/c-O2.zstd",
            locator: DebugFileLocator(debugDirectories: ["\(d)/debugdir"], searchSystem: false))
        guard case .resolved(let deep) = try frames(withDir, try XCTUnwrap(m["c_level4"])) else { return XCTFail("unresolved") }
        XCTAssertEqual(deep.first?.function, "level4")
    }

    // MARK: C++: namespaces, a class template, a lambda

    func testCxxTemplateLambdaChainOnEveryVariant() throws {
        let src = "templates.cpp"
        let expected: Expected = [
            ("geo::Box<int>::scaled(int) const", try Fixtures.line("cxx_scaled", in: src)),
            ("operator()", try Fixtures.line("cxx_call_scaled", in: src)),
            ("app::entry_cxx(int)", try Fixtures.line("cxx_call_lambda", in: src))
        ]
        let m = try Fixtures.markers("cxx-O2")
        let addr = try XCTUnwrap(m["cxx_scaled"])
        for v in try variants("cxx-O2") {
            let outcome = try frames(v, addr)
            assertChain(outcome, expected, file: src, "cxx-O2 \(v.name)")
            if case .resolved(let f) = outcome {
                XCTAssertEqual(f.first?.mangledFunction, "_ZNK3geo3BoxIiE6scaledEi")
                XCTAssertEqual(f.first?.shortFunction, "geo::Box<int>::scaled")
            }
        }
    }

    // MARK: Swift -O: a bounds check inlined from the standard library

    func testSwiftOptimisedRuntimeFailureChain() throws {
        let bases = try Fixtures.bases()
        guard bases.contains("swift-O") else { return XCTFail("the swift-O fixture was not built (swiftc)") }
        let d = try Fixtures.directory()
        let sym = try XCTUnwrap(Fixtures.functionSymbols("\(d)/swift-O.full").first { $0.2.hasSuffix("7element_2atSiSaySiG_SitF") })
        // The trap instructions (ud2) of the function are the bounds-check failures.
        let dis = Fixtures.run(
            "/usr/bin/objdump",
            [
                "-d", "--no-show-raw-insn", "--start-address=\(sym.0)",
                "--stop-address=\(sym.0 + sym.1)", "\(d)/swift-O.full"
            ])
        let traps = dis.stdout.split(separator: "\n").filter { $0.hasSuffix("ud2") }.compactMap {
            UInt64($0.split(separator: ":").first!.trimmingCharacters(in: .whitespaces), radix: 16)
        }
        XCTAssertFalse(traps.isEmpty, "no ud2 in element(_:at:)")
        let userLine = try Fixtures.line("swift_subscript", in: "subscript.swift")
        for v in try variants("swift-O") {
            for trap in traps {
                guard case .resolved(let f) = try frames(v, trap) else { XCTFail("\(v.name): unresolved trap"); continue }
                XCTAssertEqual(f.first?.function, "Swift runtime failure: Index out of range", v.name)
                // Report mode, like gdb: the trap frame carries the user's line, marked inferred.
                XCTAssertEqual((f.first?.file as NSString?)?.lastPathComponent, "subscript.swift", v.name)
                XCTAssertEqual(f.first?.line, userLine, v.name)
                XCTAssertEqual(f.first?.isInferred, true, v.name)
                XCTAssertTrue(f.contains { $0.function?.contains("Array._checkSubscript") == true }, v.name)
                XCTAssertEqual(f.last?.function, "SubscriptO.element(_: Swift.Array<Swift.Int>, at: Swift.Int) -> Swift.Int", v.name)
                XCTAssertEqual(f.last?.shortFunction, "SubscriptO.element(_:at:)", v.name)
                XCTAssertEqual(f.last?.mangledFunction, sym.2, v.name)
                XCTAssertEqual((f.last?.file as NSString?)?.lastPathComponent, "subscript.swift", v.name)
                XCTAssertEqual(f.last?.line, userLine, v.name)
                XCTAssertEqual(f.last?.isInlined, false)
                XCTAssertTrue(f.dropLast().allSatisfy(\.isInlined))
            }
        }
    }

    func testSwiftUnoptimisedFunctionEntry() throws {
        let bases = try Fixtures.bases()
        guard bases.contains("swift-Onone") else { return XCTFail("the swift-Onone fixture was not built (swiftc)") }
        let d = try Fixtures.directory()
        let sym = try XCTUnwrap(Fixtures.functionSymbols("\(d)/swift-Onone.full").first { $0.2.hasSuffix("7element_2atSiSaySiG_SitF") })
        let declLine = try Fixtures.line("swift_decl", in: "subscript.swift")
        for v in try variants("swift-Onone") {
            guard case .resolved(let f) = try frames(v, sym.0) else { XCTFail("\(v.name): unresolved"); continue }
            XCTAssertEqual(f.count, 1, v.name)
            XCTAssertEqual(f.first?.shortFunction, "SubscriptOnone.element(_:at:)", v.name)
            XCTAssertEqual(f.first?.line, declLine, v.name)
        }
    }

    // MARK: Locating debug files

    func testWrongBuildIDIsNeverAccepted() throws {
        let d = try Fixtures.directory()
        // The C++ program's split debug file offered for the C program: must be refused.
        let loc = DebugFileLocator(explicitFiles: ["\(d)/cxx-O2.debug"], searchSystem: false)
        let s = Symbolicator(locator: loc, indexCacheDirectory: nil, persistIndexes: false)
        let id = try buildID("\(d)/c-O2.bare")
        let outcome = s.symbolicate(buildID: id, modulePath: "\(d)/does-not-exist", relativeAddress: 0x1170, isReturnAddress: false, architecture: .x86_64)
        XCTAssertEqual(outcome, .unresolved(.buildIDMismatch))
        // A module path whose file is another build: also a mismatch, not a wrong answer.
        let other = s.symbolicate(buildID: id, modulePath: "\(d)/cxx-O2.full", relativeAddress: 0x1170, isReturnAddress: false, architecture: .x86_64)
        XCTAssertEqual(other, .unresolved(.buildIDMismatch))
        let missing = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
            .symbolicate(buildID: id, modulePath: nil, relativeAddress: 0x1170, isReturnAddress: false, architecture: .x86_64)
        XCTAssertEqual(missing, .unresolved(.missingDebugFile))
        XCTAssertEqual(
            s.symbolicate(buildID: nil, modulePath: nil, relativeAddress: 1, isReturnAddress: false, architecture: .x86_64), .unresolved(.notInAnyModule))
    }

    func testModuleWithoutBuildIDIsOnlyUsedWhenNoneWasAskedFor() throws {
        let d = try Fixtures.directory()
        let path = Fixtures.temporaryDirectory("noid") + "/c-O2.noid"
        let r = Fixtures.run("/usr/bin/objcopy", ["--remove-section=.note.gnu.build-id", "\(d)/c-O2.full", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertNil(try ELFInfo.read(path: path).buildID)
        let id = try buildID("\(d)/c-O2.full")
        let s = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        let rel = try XCTUnwrap(try Fixtures.markers("c-O2")["c_outer"])
        XCTAssertEqual(
            s.symbolicate(buildID: id, modulePath: path, relativeAddress: rel, isReturnAddress: false, architecture: .x86_64), .unresolved(.buildIDMismatch))
        guard case .resolved(let f) = s.symbolicate(buildID: nil, modulePath: path, relativeAddress: rel, isReturnAddress: false, architecture: .x86_64) else {
            return XCTFail("a module without a build-id is still usable by path")
        }
        XCTAssertEqual(f.first?.function, "entry_c")
    }

    func testDebuglinkWithWrongCRCIsRefused() throws {
        let d = try Fixtures.directory()
        let dir = Fixtures.temporaryDirectory("crc")
        // Same name the debuglink asks for, but different contents (another program's debug file).
        try FileManager.default.copyItem(atPath: "\(d)/c-O2.stripped", toPath: "\(dir)/c-O2.stripped")
        try FileManager.default.copyItem(atPath: "\(d)/c-O0.debug", toPath: "\(dir)/c-O2.debug")
        let info = try ELFInfo.read(path: "\(dir)/c-O2.stripped")
        XCTAssertEqual(info.debugLink?.name, "c-O2.debug")
        let loc = DebugFileLocator(searchSystem: false).locate(buildID: info.buildID, modulePath: "\(dir)/c-O2.stripped")
        XCTAssertNil(loc.debugFile)
        XCTAssertEqual(loc.mismatched, ["\(dir)/c-O2.debug"])
    }

    func testELFInfoKinds() throws {
        let d = try Fixtures.directory()
        let full = try ELFInfo.read(path: "\(d)/c-O2.full")
        XCTAssertTrue(full.hasDebugInfo); XCTAssertTrue(full.hasSymbols); XCTAssertEqual(full.kind, .executable)
        XCTAssertEqual(full.buildID?.bytes.count, 20)
        let debug = try ELFInfo.read(path: "\(d)/c-O2.debug")
        XCTAssertEqual(debug.kind, .debugOnly); XCTAssertEqual(debug.buildID, full.buildID)
        let bare = try ELFInfo.read(path: "\(d)/c-O2.bare")
        XCTAssertFalse(bare.hasDebugInfo)
        XCTAssertTrue(try ELFInfo.read(path: "\(d)/c-O2.zlib").hasDebugInfo)
        XCTAssertThrowsError(try ELFInfo.read(path: d)) { XCTAssertEqual($0 as? ELFError, .isDirectory(d)) }
        XCTAssertThrowsError(try ELFInfo.read(path: "\(d)/commands.txt")) { XCTAssertEqual($0 as? ELFError, .notELF("\(d)/commands.txt")) }
        XCTAssertThrowsError(try ELFInfo.read(path: "\(d)/nope")) { XCTAssertEqual($0 as? ELFError, .notFound("\(d)/nope")) }
        let truncated = Fixtures.temporaryDirectory("trunc") + "/t.elf"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(d)/c-O2.full"))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        XCTAssertThrowsError(try ELFInfo.read(path: truncated)) { XCTAssertEqual($0 as? ELFError, .truncated(truncated)) }
    }

    func testHeaderOffsetsNearTwoToTheSixtyFourAreAnErrorNotATrap() throws {
        // A hostile upload: offsets chosen so offset + size wraps around. Each must be refused as
        // truncated; an arithmetic trap here would take the whole server down.
        let d = try Fixtures.directory()
        let original = try Data(contentsOf: URL(fileURLWithPath: "\(d)/c-O2.full"))
        func patched(_ offset: Int, _ value: UInt64) throws -> String {
            var bytes = [UInt8](original)
            withUnsafeBytes(of: value.littleEndian) { for (i, b) in $0.enumerated() { bytes[offset + i] = b } }
            let path = Fixtures.temporaryDirectory("hostile") + "/h.elf"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        let shoff = original.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0x28, as: UInt64.self) }
        let shentsize = Int(original.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0x3A, as: UInt16.self) })
        for path in [
            try patched(0x28, UInt64.max - 8),  // e_shoff
            try patched(0x20, UInt64.max - 8),  // e_phoff
            try patched(Int(shoff) + shentsize + 0x18, UInt64.max - 8)
        ] {  // section 1's sh_offset
            XCTAssertThrowsError(try ELFInfo.read(path: path), path)
        }
    }

    // MARK: Thread safety

    func testConcurrentLookupsAgree() throws {
        let d = try Fixtures.directory()
        let module = "\(d)/c-O2.full"
        let info = try ELFInfo.read(path: module)
        let s = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        let syms = Fixtures.functionSymbols(module)
        let addresses = syms.flatMap { sym in stride(from: sym.0, to: sym.0 + sym.1, by: 3).map { $0 } }
        let reference = addresses.map {
            s.symbolicate(buildID: info.buildID, modulePath: module, relativeAddress: $0, isReturnAddress: false, architecture: .x86_64)
        }
        let fresh = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        let results = Mutex<[[SymbolicationOutcome]]>(Array(repeating: [], count: 8))
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            let r = addresses.map {
                fresh.symbolicate(buildID: info.buildID, modulePath: module, relativeAddress: $0, isReturnAddress: false, architecture: .x86_64)
            }
            results.withLock { $0[t] = r }
        }
        for r in results.withLock({ $0 }) { XCTAssertEqual(r, reference) }
    }
}
