// The `faultline` and `faultline-server` binaries must not carry the SDK's libc interposers: they
// would take over pthread_create and the signal masks of every thread the server starts.
// And `faultline` reaches the server-side commands only through `faultline-server` beside it, and
// links FoundationEssentials, not full Foundation.
import FaultlineTestSupport
import Foundation
import XCTest

final class CLIBinaryTests: XCTestCase {
    static let interposers: Set<String> = ["pthread_create", "sigprocmask", "pthread_sigmask"]

    /// Interposers `nm` lists as defined in the binary, in its symbol table or its dynamic one.
    func definedInterposers(_ binary: String) throws -> Set<String> {
        var found = Set<String>()
        for flags in ["--defined-only", "-D --defined-only"] {
            let out = (try? TestSupport.shell("nm \(flags) '\(binary)' 2>/dev/null")) ?? ""
            for line in out.split(separator: "\n") {
                guard let name = line.split(separator: " ").last.map(String.init) else { continue }
                let bare = String(name.split(separator: "@").first ?? "")
                if Self.interposers.contains(bare) { found.insert(bare) }
            }
        }
        return found
    }

    func testTheFaultlineBinariesDefineNoneOfTheSDKsInterposers() throws {
        for binary in ["faultline", "faultline-server"] {
            XCTAssertEqual(
                try definedInterposers(TestSupport.product(binary)), [],
                "the \(binary) executable links the SDK's crash core; depend on FaultlineCrashPickup, not Faultline")
        }
    }

    /// `faultline` links no server code (its one-address start is what `symbolicate` is measured
    /// by): no libmicrohttpd, libpq, SQLite or libcurl among its libraries.
    func testTheFaultlineBinaryLinksNoServerLibraries() throws {
        let libraries = try TestSupport.shell("ldd '\(TestSupport.product("faultline"))'")
        for heavy in ["libmicrohttpd", "libpq", "libsqlite3", "libcurl", "libcrypto"] {
            XCTAssertFalse(libraries.contains(heavy), "faultline links \(heavy):\n\(libraries)")
        }
        XCTAssertTrue(try TestSupport.shell("ldd '\(TestSupport.product("faultline-server"))'").contains("libmicrohttpd"))
    }

    /// `faultline` links FoundationEssentials, never full Foundation: CoreFoundation's constructor
    /// and ICU's static initialisers were ~3 MB of a one-address run's peak memory (issue 16).
    /// A module it depends on that says `import Foundation` brings them back.
    func testTheFaultlineBinaryLinksNoFullFoundation() throws {
        let faultline = TestSupport.product("faultline")
        let libraries = try TestSupport.shell("ldd '\(faultline)'")
        for full in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"] {
            XCTAssertFalse(
                libraries.contains(full), "faultline links \(full): a module it depends on imports Foundation, not FoundationEssentials\n\(libraries)")
        }
        // A statically linked build has no libraries to list, but CoreFoundation's constructor
        // (the symbol table must be there for this to mean anything: our own entry point is).
        let symbols = try TestSupport.shell("nm '\(faultline)'")
        XCTAssertTrue(symbols.contains("faultline_main"), "nm listed no symbols of faultline")
        XCTAssertFalse(symbols.contains("__CFInitialize"), "faultline links CoreFoundation")
        // The same checks see full Foundation where it belongs.
        XCTAssertTrue(try TestSupport.shell("ldd '\(TestSupport.product("faultline-server"))'").contains("libFoundation.so"))
    }

    /// A server-side command replaces `faultline` with `faultline-server` (same pid, same
    /// arguments); without it beside `faultline` the error names what is missing.
    func testServerCommandsRunInFaultlineServerAndAMissingOneIsNamed() throws {
        let help = try TestSupport.run(TestSupport.product("faultline"), ["projects", "--help"])
        XCTAssertEqual(help.exitCode, 0, help.stderr)
        XCTAssertTrue(help.stdout.contains("usage: faultline projects"), "faultline-server's own help, not faultline's list: \(help.stdout)")

        // The hand-over itself: a stand-in faultline-server beside a copy of faultline reports the
        // pid it runs as and the arguments it got, bytes included that are not UTF-8.
        let stand = TestSupport.makeTemporaryDirectory()
        try FileManager.default.copyItem(atPath: TestSupport.product("faultline"), toPath: stand + "/faultline")
        try "#!/bin/sh\necho \"pid $$\"; printf 'args '; printf '%s\\n' \"$@\" | od -An -tx1 | tr -d ' \\n'; echo\n"
            .write(toFile: stand + "/faultline-server", atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(stand + "/faultline-server", 0o755), 0)
        let sh = try TestSupport.run("/bin/sh", ["-c", "'\(stand)/faultline' upload --wait \"$(printf 'caf\\351')\" & echo \"spawned $!\"; wait"])
        let lines = sh.stdout.split(separator: "\n").map(String.init)
        let spawned = lines.first { $0.hasPrefix("spawned ") }.map { String($0.dropFirst(8)) }
        let ran = lines.first { $0.hasPrefix("pid ") }.map { String($0.dropFirst(4)) }
        XCTAssertNotNil(spawned, sh.stdout)
        XCTAssertEqual(ran, spawned, "faultline-server runs in faultline's process: \(sh.stdout)")
        // "upload\n--wait\ncaf\xE9\n" in hex: the 0xE9 byte arrives as it was given, not re-encoded.
        XCTAssertTrue(lines.contains("args 75706c6f61640a2d2d776169740a636166e90a"), sh.stdout)

        let dir = TestSupport.makeTemporaryDirectory()
        let alone = dir + "/faultline"
        try FileManager.default.copyItem(atPath: TestSupport.product("faultline"), toPath: alone)
        let missing = try TestSupport.run(alone, ["serve", "--port", "0"])
        XCTAssertEqual(missing.exitCode, 1, "\(missing)")
        XCTAssertTrue(missing.stderr.contains("faultline-server") && missing.stderr.contains(dir), missing.stderr)
        // Commands of its own still run.
        let version = try TestSupport.run(alone, ["--version"])
        XCTAssertEqual(version.exitCode, 0)
    }

    /// The check above would notice: a program that links the SDK defines them.
    func testAProgramLinkingTheSDKDefinesThem() throws {
        XCTAssertEqual(try definedInterposers(TestSupport.product("faultline-crasher")), Self.interposers)
    }
}
