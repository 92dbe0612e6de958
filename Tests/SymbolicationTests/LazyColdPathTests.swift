// The lazy cold path (partial indexes from the units covering the addresses asked for) and the
// two-thread full build must answer exactly what the single-threaded full index answers.
import Foundation
import XCTest
@testable import FaultlineSymbolication

final class LazyColdPathTests: XCTestCase {
    /// A shared library of eight compile units (GCC -O2, with inlining), built once.
    static let multiUnitLibrary: Result<String, FixtureError> = {
        let dir = Fixtures.temporaryDirectory("lazy-units")
        var sources: [String] = []
        for u in 0..<8 {
            var text = "static inline int helper\(u)(int x) { return x * \(u + 3) + (x >> 2); }\n"
            for f in 0..<6 {
                text += """
                    __attribute__((noinline)) int unit\(u)_f\(f)(int x) {
                        int s = 0;
                        for (int i = 0; i < x; i++) s += helper\(u)(i ^ \(f));
                        return s + \(f);
                    }

                    """
            }
            let path = "\(dir)/unit\(u).c"
            try? text.write(toFile: path, atomically: true, encoding: .utf8)
            sources.append(path)
        }
        let out = "\(dir)/libunits.so"
        let r = Fixtures.run("/usr/bin/cc", ["-shared", "-fPIC", "-g", "-O2", "-o", out] + sources)
        guard r.status == 0 else { return .failure(FixtureError(description: "cc failed: \(r.stderr)")) }
        return .success(out)
    }()

    func library() throws -> String { try Self.multiUnitLibrary.get() }

    func symbolicator(lazy: Bool) -> Symbolicator {
        let s = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        s.lazyColdPath = lazy
        return s
    }

    func testFirstAddressParsesOnlyItsUnitThenGrowsAndAgreesWithTheFullIndex() throws {
        let lib = try library()
        let f = try XCTUnwrap(Fixtures.functionSymbols(lib).first { $0.2 == "unit5_f2" })
        let lazy = try XCTUnwrap(try symbolicator(lazy: true).loadedModule(objectFile: lib, addresses: [f.0 + 4]))
        XCTAssertTrue(lazy.isPartial, "one address of eight units must not build the full index")
        XCTAssertEqual(Set(lazy.index.cuOfRange).count, 1, "only the unit covering the address is parsed")
        let full = try XCTUnwrap(try symbolicator(lazy: false).loadedModule(objectFile: lib))
        XCTAssertFalse(full.isPartial)
        XCTAssertEqual(lazy.frames(at: f.0 + 4), full.frames(at: f.0 + 4))
        // Every byte, walking across units: the partial index grows and never answers differently.
        var sawPartialMiss = false
        for a in Fixtures.functionBytes(lib) {
            if lazy.isPartial { sawPartialMiss = true }
            XCTAssertEqual(lazy.frames(at: a), full.frames(at: a), "address 0x\(String(a, radix: 16))")
        }
        XCTAssertTrue(sawPartialMiss)
        XCTAssertFalse(lazy.isPartial, "past 40% of .debug_info the full index replaces the partial one")
    }

    func testAddressModeWithInputAgreesWithLLVMSymbolizer() throws {
        let llvm = try XCTUnwrap(Fixtures.llvmSymbolizer)
        var objects = [try library()]
        let libpython = "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"
        if FileManager.default.fileExists(atPath: libpython) { objects.append(libpython) }
        for object in objects {
            let all = Fixtures.functionBytes(object)
            var rng = SplitMix64(state: 7)
            for count in [1, 3, 200] {
                let addresses = (0..<count).map { _ in all[Int(rng.next() % UInt64(all.count))] }
                let text = addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n")
                let s = symbolicator(lazy: true)
                let input = Array(text.utf8)
                let sym = try input.withUnsafeBytes { try LLVMStyleSymbolizer(objectFile: object, symbolicator: s, input: $0) }
                var out: [UInt8] = []
                _ = input.withUnsafeBytes { sym.run(input: $0, output: &out) }
                let r = Fixtures.run(llvm, ["--obj=\(object)", "--inlines", "--no-demangle"], stdin: Data((text + "\n").utf8))
                var plain = sym
                plain.demangle = false
                var out2: [UInt8] = []
                _ = input.withUnsafeBytes { plain.run(input: $0, output: &out2) }
                XCTAssertEqual(String(decoding: out2, as: UTF8.self), r.stdout, "\(object), \(count) addresses")
                XCTAssertFalse(out.isEmpty)
            }
        }
    }

    func testTwoThreadBuildEqualsOneThreadBuild() throws {
        let lib = try library()
        let debug = try ELFHandle(path: lib)
        let serial = DWARFIndexBuilder.build(debugFile: debug, symbolSources: [debug])
        let parallel = try XCTUnwrap(DWARFIndexBuilder.buildInParallel(debugFile: debug, symbolSources: [debug], minimumBytes: 0))
        let a = LoadedModule(index: try XCTUnwrap(DWARFIndex.inMemory(serial, buildID: nil)))
        let b = LoadedModule(index: try XCTUnwrap(DWARFIndex.inMemory(parallel, buildID: nil)))
        XCTAssertEqual(a.index.cuLow.count, b.index.cuLow.count)
        XCTAssertEqual(a.index.scopeName.count, b.index.scopeName.count)
        for addr in Fixtures.functionBytes(lib) {
            XCTAssertEqual(a.frames(at: addr), b.frames(at: addr), "address 0x\(String(addr, radix: 16))")
        }
    }
}
