// Test fixtures built from source at test time: a small C program with DWARF and a build-id.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineSymbolication

enum Fixtures {
    static let crasherSource = """
        #include <stdio.h>
        __attribute__((noinline)) int faultline_fixture_leaf(int *p) { return *p + 1; }
        __attribute__((noinline)) int faultline_fixture_middle(int *p) { return faultline_fixture_leaf(p) * 2; }
        int main(int argc, char **argv) { int *p = argc > 5 ? &argc : 0; printf("%d\\n", faultline_fixture_middle(p)); return 0; }
        """

    struct Program {
        let path: String
        let buildID: BuildID
        /// Function name → module-relative address (PIE, so the ELF vaddr).
        let symbols: [String: UInt64]
    }

    /// Compiles the fixture with `cc -g -O1 -Wl,--build-id=sha1`; `variant` changes the build-id.
    static func buildProgram(in dir: String, variant: Int = 0) throws -> Program {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/cc") else {
            throw TestSupport.ShellError(command: "/usr/bin/cc", output: "no C compiler (tools/setup installs gcc)")
        }
        let src = dir + "/fixture\(variant).c"
        let out = dir + "/fixture\(variant)"
        try (crasherSource + "\nint faultline_fixture_variant = \(variant);\n").write(toFile: src, atomically: false, encoding: .utf8)
        let cc = try TestSupport.run("/usr/bin/cc", ["-g", "-O1", "-Wl,--build-id=sha1", "-o", out, src])
        guard cc.exitCode == 0 else { throw TestSupport.ShellError(command: "cc -g -O1 " + src, output: cc.description) }
        let summary = try ELFSummary.read(path: out)
        let nm = try TestSupport.run("/usr/bin/nm", [out])
        var symbols: [String: UInt64] = [:]
        for line in nm.stdout.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 3, let v = UInt64(f[0], radix: 16) { symbols[String(f[2])] = v }
        }
        return Program(path: out, buildID: summary.buildID, symbols: symbols)
    }

    /// An event whose stack is main → middle → leaf inside `program` (return addresses inside calls).
    static func crashEvent(_ program: Program, base: UInt64 = 0x5600_0000_0000, release: String = "fixture@1") -> JSONValue {
        let leaf = program.symbols["faultline_fixture_leaf"]!
        let middle = program.symbols["faultline_fixture_middle"]!
        let main = program.symbols["main"]!
        return TestEvents.native(
            buildID: program.buildID.hex, modulePath: "/opt/fixture/bin/fixture", base: base,
            offsets: [main + 8, middle + 4, leaf], release: release)
    }
}
