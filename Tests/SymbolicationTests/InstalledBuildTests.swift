// The installed form (`swift build -c release --static-swift-stdlib`, README): it demangles Swift
// and C++ names exactly as the dynamically linked build does (with the Swift runtime and libstdc++
// linked statically no dynamic symbol table lists `swift_demangle` or `__cxa_demangle`, so the
// demangler links both directly), and it loads no shared library but libc, libm and zlib (what a
// one-address `faultline symbolicate` is measured by; Package.swift says how the link does it).
// tools/test builds that form into .build/static-release before the suite runs.
import FaultlineTestSupport
import Foundation
import XCTest

final class InstalledBuildTests: XCTestCase {
    static var staticFaultline: String { TestSupport.repositoryRoot().path + "/.build/static-release/release/faultline" }

    /// The static release build's path; a failure, not a skip, when it is missing (tools/test
    /// builds it; a run that did not is told how).
    func staticBuild() throws -> String {
        let path = Self.staticFaultline
        return try XCTUnwrap(
            FileManager.default.isExecutableFile(atPath: path) ? path : nil,
            "no static release build at \(path): run `swift build -c release --static-swift-stdlib --product faultline --scratch-path .build/static-release` (tools/test does)"
        )
    }

    /// The libraries the executable itself names (DT_NEEDED), and those the loader maps for it.
    func testTheStaticReleaseBuildLoadsOnlyLibcLibmAndZlib() throws {
        let staticBuild = try staticBuild()
        let dynamic = try TestSupport.shell("readelf -d '\(staticBuild)'")
        let needed = Set(
            dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
                .compactMap { $0.split(separator: "[").last?.split(separator: "]").first.map(String.init) })
        XCTAssertEqual(needed, ["libc.so.6", "libm.so.6", "libz.so.1", "ld-linux-x86-64.so.2"], dynamic)
        let loaded = try TestSupport.shell("ldd '\(staticBuild)'")
        for shared in ["libstdc++", "libgcc_s", "libdw", "libelf", "liblzma", "libbz2"] {
            XCTAssertFalse(loaded.contains(shared), "the installed faultline loads \(shared):\n\(loaded)")
        }
        // Linked in, not lost: libdw reads the DWARF and libstdc++ demangles (the test below).
        let symbols = try TestSupport.shell("nm '\(staticBuild)'")
        for linked in ["dwarf_begin_elf", "__cxa_demangle"] {
            XCTAssertTrue(symbols.contains(" \(linked)\n"), "\(linked) is not in the installed faultline")
        }
        // None of the archives' symbols is exported (the toolchain's --exclude-libs ALL).
        let exported = try TestSupport.shell("nm -D --defined-only '\(staticBuild)'")
        for linked in ["dwarf_begin_elf", "__cxa_demangle"] {
            XCTAssertFalse(exported.contains(" \(linked)\n"), "the installed faultline exports \(linked)")
        }
    }

    func testTheStaticReleaseBuildAndTheDebugBuildPrintTheSameDemangledNames() throws {
        let staticBuild = try staticBuild()
        let linked = try TestSupport.shell("ldd '\(staticBuild)' || true")
        XCTAssertFalse(linked.contains("libswiftCore.so"), "the Swift runtime is linked statically:\n\(linked)")

        let dir = TestSupport.makeTemporaryDirectory("installed-demangle")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        struct Shop {
            @inline(never) func checkout(_ items: Int) -> Int { items &* 3 }
        }
        print(Shop().checkout(CommandLine.arguments.count))
        """.write(toFile: dir + "/shop.swift", atomically: false, encoding: .utf8)
        try """
        namespace store { template <typename T> __attribute__((noinline)) T total(T a) { return a * 3; } }
        int main(int argc, char **) { return store::total<long>(argc) == 9; }
        """.write(toFile: dir + "/store.cpp", atomically: false, encoding: .utf8)
        _ = try TestSupport.shell("cd '\(dir)' && swiftc -g -module-name prog shop.swift -o shop && c++ -g -O1 store.cpp -o store")

        for (binary, symbol, expected) in [
            ("shop", "$s4prog4ShopV8checkoutyS2iF", "prog.Shop.checkout(Swift.Int) -> Swift.Int"),
            ("store", "_ZN5store5totalIlEET_S1_", "long store::total<long>(long)")
        ] {
            let nm = try TestSupport.shell("nm '\(dir)/\(binary)' | grep -F ' \(symbol)' | head -1")
            let address = "0x" + (nm.split(separator: " ").first.map(String.init) ?? "")
            let installed = try TestSupport.run(staticBuild, ["symbolicate", "--obj", dir + "/" + binary, address])
            let debug = try TestSupport.run(TestSupport.product("faultline"), ["symbolicate", "--obj", dir + "/" + binary, address])
            XCTAssertEqual(installed.exitCode, 0, installed.description)
            XCTAssertEqual(installed.stdout.split(separator: "\n").first.map(String.init), expected, "\(binary): \(installed.stdout)")
            XCTAssertEqual(installed.stdout, debug.stdout, "\(binary): both build forms print the same")
        }
    }
}
