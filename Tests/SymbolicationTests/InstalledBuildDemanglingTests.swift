// The installed form (`swift build -c release --static-swift-stdlib`, README) demangles Swift and
// C++ names exactly as the dynamically linked build does: with the Swift runtime linked
// statically no dynamic symbol table lists `swift_demangle`, so the demangler links it directly.
// tools/test builds that form into .build/static-release before the suite runs.
import FaultlineTestSupport
import Foundation
import XCTest

final class InstalledBuildDemanglingTests: XCTestCase {
    static var staticFaultline: String { TestSupport.repositoryRoot().path + "/.build/static-release/release/faultline" }

    func testTheStaticReleaseBuildAndTheDebugBuildPrintTheSameDemangledNames() throws {
        let staticBuild = Self.staticFaultline
        guard FileManager.default.isExecutableFile(atPath: staticBuild) else {
            // Not a skip: tools/test builds it; a run that did not is told how.
            return XCTFail(
                "no static release build at \(staticBuild): run `swift build -c release --static-swift-stdlib --product faultline --scratch-path .build/static-release` (tools/test does)"
            )
        }
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
