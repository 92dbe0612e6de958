// `dwz -m` (Debian's dh_dwz, Fedora's debuginfo packages) moves the DWARF several files share
// into one supplementary file, a relocatable file with a build-id that each of them names. The
// server refused it ("a relocatable object file"), and it could not be fetched from debuginfod:
// the files naming it were symbolicated from ELF symbols only. It is taken now, found by its
// build-id only (never at the path the uploaded DWARF writes), and when it arrives after the
// files that need it, their events are symbolicated again.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest
@testable import FaultlineServer

final class SupplementaryUploadTests: XCTestCase {
    func testADwzSupplementaryFileUploadedLastNamesTheEarlierOccurrences() throws {
        let dir = TestSupport.makeTemporaryDirectory("dwz-upload")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        static inline int shared_step(int x) { return x * 3 + 1; }
        """.write(toFile: dir + "/shared.h", atomically: true, encoding: .utf8)
        for name in ["a", "b"] {
            try """
            #include "shared.h"
            __attribute__((noinline)) int \(name)_fn(volatile int *p) { return shared_step(*p) + 7; }
            int main(void) { volatile int x = 2; return \(name)_fn(&x) == 0; }
            """.write(toFile: "\(dir)/\(name).c", atomically: true, encoding: .utf8)
        }
        _ = try TestSupport.shell(
            "cd '\(dir)' && gcc -O2 -g -Wl,--build-id=sha1 a.c -o a && gcc -O2 -g -Wl,--build-id=sha1 b.c -o b && "
                + "dwz -m common.debug -M '\(dir)/common.debug' a b")
        func buildID(_ path: String) throws -> String {
            try TestSupport.shell("readelf -n '\(path)' | awk '/Build ID/ {print $3}'").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (a, common) = (try buildID(dir + "/a"), try buildID(dir + "/common.debug"))
        let fn = try XCTUnwrap(
            try TestSupport.shell("nm '\(dir)/a'").split(separator: "\n").first { $0.hasSuffix(" T a_fn") }.flatMap { UInt64($0.prefix(16), radix: 16) })

        let server = try TestServer()
        defer { server.stop() }
        let base: UInt64 = 0x5555_0000_0000
        let event = TestEvents.native(buildID: a, modulePath: "/opt/app/a", base: base, offsets: [fn + 4])
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        try server.waitUntilIdle()
        // The file that needs the supplementary one first: its DWARF cannot be read yet (the
        // supplementary file sits at the path its DWARF writes, which the server never opens).
        XCTAssertEqual(try server.uploadDebugFile(dir + "/a"), "ok")
        try server.waitUntilIdle()
        let issue = try XCTUnwrap((try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []).first?["id"]?.stringValue)
        func frame() throws -> JSONValue? {
            (try server.getJSON("/api/0/issues/\(issue)/")["stack"]?.arrayValue ?? []).first { $0["function"]?.stringValue == "a_fn" }
        }
        XCTAssertNil(try frame()?["filename"], "ELF symbols only without the supplementary file")

        XCTAssertEqual(try server.uploadDebugFile(dir + "/common.debug"), "ok", "the supplementary file is taken")
        try server.waitUntilIdle()
        XCTAssertEqual(try frame()?["filename"]?.stringValue.map { ($0 as NSString).lastPathComponent }, "a.c", "named from the DWARF now")
        XCTAssertEqual(server.get("/buildid/\(common)/debuginfo").status, 200, "debuginfod serves it by its build-id")
    }
}
