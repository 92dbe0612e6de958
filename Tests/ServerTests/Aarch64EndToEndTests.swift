// An aarch64 crash end to end on this x86_64 machine: the crash probes built with the aarch64 cross
// compilers and split for shipping (`faultline debug-files split`), the stripped programs crashed
// under qemu-aarch64 with the aarch64 preload library, the reports sent by `faultline crashes DIR
// --send DSN` to a real server on 127.0.0.1 — grouped while unsymbolicated — then the aarch64
// debug files uploaded with `faultline upload --wait`, whose backfill names the frames.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineHashing
import FaultlineTestSupport

final class Aarch64EndToEndTests: XCTestCase {
    var server: TestServer!
    var work: String!
    let faultline = TestSupport.product("faultline")

    override func setUpWithError() throws {
        try Aarch64Emulation.requireTools()
        server = try TestServer()
        work = TestSupport.makeTemporaryDirectory("aarch64-e2e")
    }
    override func tearDown() {
        server?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    func crash(_ program: String, _ mode: String) throws {
        let o = try Aarch64Emulation.run(program, [mode], crashDirectory: work + "/crashes")
        XCTAssertEqual(o.signal, SIGSEGV, "\(mode): \(o)")
    }

    func issues() throws -> [JSONValue] { try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? [] }

    /// The issue's representative stack, innermost first, as the API gives it.
    func stack(ofIssue id: String) throws -> [JSONValue] { try server.getJSON("/api/0/issues/\(id)/")["stack"]?.arrayValue ?? [] }

    func testAnAarch64CrashGroupsThenIsSymbolicatedByItsUploadedDebugFiles() throws {
        let dist = work + "/dist"
        let crasher = try Aarch64Emulation.buildCrasher(in: dist)
        let split = try TestSupport.run(faultline, ["debug-files", "split", "--output", work + "/debug", dist])
        XCTAssertEqual(split.exitCode, 0, split.description)
        XCTAssertFalse(try ELFInfoCheck.hasDebugInfo(crasher), "the shipped program is stripped")
        XCTAssertFalse(try ELFInfoCheck.hasDebugInfo(dist + "/libcrashlib.so"), "the shipped library is stripped")

        // Two crashes in the library and one null dereference in the program: two issues.
        try crash(crasher, "library")
        try crash(crasher, "library")
        try crash(crasher, "null")
        let sent = try TestSupport.run(faultline, ["crashes", work + "/crashes", "--send", server.dsn], timeout: 120)
        XCTAssertEqual(sent.exitCode, 0, sent.description)
        XCTAssertTrue(sent.stdout.contains("sent 3 crash event"), sent.description)
        try server.waitUntilIdle()

        let before = try issues()
        XCTAssertEqual(before.count, 2, "grouped by the frames' build-ids and offsets: \(before.map(\.jsonString))")
        XCTAssertEqual(before.compactMap { $0["count"]?.int64Value }.sorted(), [1, 2])
        for issue in before {
            let id = try XCTUnwrap(issue["id"]?.stringValue)
            let text = try server.getJSON("/api/0/issues/\(id)/").jsonString
            XCTAssertFalse(text.contains("crash_library.c") || text.contains("crasher.c"), "no source lines without the debug files: \(text)")
            let events = try server.getJSON("/api/0/issues/\(id)/events/").arrayValue ?? []
            let eventID = try XCTUnwrap(events.first?["event_id"]?.stringValue, "\(events)")
            let event = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(eventID)/")
            XCTAssertEqual(event["event"]?["contexts"]?["device"]?["arch"]?.stringValue, "arm64", "the event says it came from aarch64")
        }

        let upload = try TestSupport.run(
            faultline, ["upload", "--wait", "--json", work + "/debug"],
            environment: ["FAULTLINE_URL": "http://127.0.0.1:\(server.port)", "FAULTLINE_TOKEN": server.token], timeout: 180)
        XCTAssertEqual(upload.exitCode, 0, upload.description)
        try server.waitUntilIdle()

        let after = try issues()
        XCTAssertEqual(after.count, 2, "the backfill keeps the two crashes apart: \(after.map(\.jsonString))")
        let sources = Aarch64Emulation.probeSources
        var named: [String: [JSONValue]] = [:]
        for issue in after {
            let frames = try stack(ofIssue: try XCTUnwrap(issue["id"]?.stringValue))
            for name in ["library_fault", "null_write"] where frames.contains(where: { $0["function"]?.stringValue == name }) { named[name] = frames }
        }
        let library = try XCTUnwrap(named["library_fault"], "an issue whose stack names library_fault: \(after.map(\.jsonString))")
        let null = try XCTUnwrap(named["null_write"], "an issue whose stack names null_write: \(after.map(\.jsonString))")
        func has(_ frames: [JSONValue], _ function: String, _ file: String, _ line: Int) -> Bool {
            frames.contains {
                $0["function"]?.stringValue == function && $0["filename"]?.stringValue == "\(sources)/\(file)" && $0["lineno"]?.int64Value == Int64(line)
            }
        }
        let probe = try String(contentsOfFile: sources + "/crasher.c", encoding: .utf8).components(separatedBy: "\n")
        func line(_ text: String) -> Int { (probe.firstIndex { $0.contains(text) } ?? -1) + 1 }
        XCTAssertTrue(has(library, "library_fault", "crash_library.c", 2), "\(library)")
        XCTAssertTrue(
            has(library, "main", "crasher.c", line("library_fault((volatile int *)32)")), "the call site, 4 bytes before the return address: \(library)")
        XCTAssertTrue(has(null, "null_write", "crasher.c", line("void null_write(")), "\(null)")
        XCTAssertTrue(has(null, "main", "crasher.c", line("null_write((volatile int *)16)")), "\(null)")

        // The server names the uploaded file's architecture as Sentry does (`dif.cpuName`).
        let debugFiles = TestSupport.files(in: work + "/debug/.build-id", suffix: "").flatMap { TestSupport.files(in: $0, suffix: ".debug") }
        XCTAssertEqual(debugFiles.count, 2, "the program's and the library's debug files")
        for path in debugFiles {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertLessThan(data.count, ChunkUpload.chunkSize, "one chunk")
            let checksum = SHA1Hash.hex(data)
            let spec: JSONValue = [checksum: ["name": .string((path as NSString).lastPathComponent), "chunks": [.string(checksum)]]]
            let r = RawHTTP.send(
                port: server.port, method: "POST", path: "/api/0/projects/faultline/default/files/difs/assemble/",
                headers: ["Authorization": "Bearer \(server.token)"], body: spec.serialized())
            XCTAssertEqual(r.json?[checksum]?["state"]?.stringValue, "ok", r.text)
            XCTAssertEqual(r.json?[checksum]?["dif"]?["cpuName"]?.stringValue, "arm64", r.text)
        }
    }
}
