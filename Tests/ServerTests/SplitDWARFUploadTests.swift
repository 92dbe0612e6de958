// A split-DWARF binary's skeleton units name their .dwo files by path (absolute, or under the
// compilation directory the DWARF records). On a developer's machine `faultline symbolicate`
// follows them; on the server an uploaded file's DWARF would choose which files of the server's
// own disk are opened (and symbolication would work only where the server runs on the build
// machine). The server never opens them: the uploaded file's skeleton units fall back to symbols.
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineTestSupport
import Foundation
import XCTest
@testable import FaultlineServer

final class SplitDWARFUploadTests: XCTestCase {
    func testAnUploadedFilesDwoPathsAreNeverOpenedOnTheServer() throws {
        let dir = TestSupport.makeTemporaryDirectory("split-upload")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let build = dir + "/build"
        try FileManager.default.createDirectory(atPath: build, withIntermediateDirectories: true)
        // `inner` exists only in the DWARF of the .dwo (inlined, no symbol): it shows whether the
        // .dwo was read.
        try """
        static inline __attribute__((always_inline)) int inner(volatile int *p) { return *p * 3 + 1; }
        __attribute__((noinline)) int leaf(volatile int *p) { return inner(p); }
        int main(void) { volatile int x = 41; return leaf(&x); }
        """.write(toFile: build + "/prog.c", atomically: true, encoding: .utf8)
        _ = try TestSupport.shell("cd '\(build)' && gcc -O1 -g -gsplit-dwarf -o prog prog.c && test -f prog-prog.dwo -o -f prog.dwo")
        let buildID = try XCTUnwrap(
            BuildID(hex: try TestSupport.shell("readelf -n '\(build)/prog' | awk '/Build ID/ {print $3}'").trimmingCharacters(in: .whitespacesAndNewlines)))
        let leaf = try XCTUnwrap(
            try TestSupport.shell("nm '\(build)/prog'").split(separator: "\n").first { $0.hasSuffix(" T leaf") }.flatMap { UInt64($0.prefix(16), radix: 16) })

        // The developer's side: the .dwo is read, file and line come from it.
        let cli = try TestSupport.run(TestSupport.product("faultline"), ["symbolicate", "--no-cache", "--obj", build + "/prog", "0x" + String(leaf, radix: 16)])
        XCTAssertTrue(cli.stdout.hasPrefix("inner\n"), "the CLI follows the skeleton to its .dwo: \(cli)")

        // The server's store holds the uploaded binary by build-id; its .dwo stays where it was built.
        let hex = buildID.hex
        let stored = dir + "/debug/.build-id/\(hex.prefix(2))"
        try FileManager.default.createDirectory(atPath: stored, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: build + "/prog", toPath: stored + "/\(hex.dropFirst(2)).debug")
        let server = LibdwFrameSymbolicator(debugRoot: dir + "/debug", indexDirectory: dir + "/index")
        let frames = try XCTUnwrap(
            server.resolve(buildID: buildID, modulePath: build + "/prog", offset: leaf, isReturnAddress: false, architecture: .x86_64).frames)
        XCTAssertEqual(frames.map { $0.function }, ["leaf"], "no inlined inner: the .dwo on this machine was not opened")
        XCTAssertEqual(frames.map { $0.file.map(PathName.last) }, ["prog.c"], "file and line from the skeleton's table, in the upload")
        server.prepare(buildID: buildID)  // the full index built on arrival
        let prepared = try XCTUnwrap(
            server.resolve(buildID: buildID, modulePath: nil, offset: leaf, isReturnAddress: false, architecture: .x86_64).frames)
        XCTAssertEqual(prepared.map { $0.function }, ["leaf"])
    }
}
