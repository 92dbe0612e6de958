// The SDK pointed at a SWIFT_BACKTRACE output directory: each JSON crash log of an earlier run
// becomes one crash event on the next launch, then is gone.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class SwiftBacktracePickupTests: XCTestCase {
    var work = ""
    let crasher = TestSupport.product("faultline-crasher")
    override func setUp() { work = TestSupport.makeTemporaryDirectory("sdk-swift-logs") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: work) }

    func launch(logs: String, dsn: String) throws -> TestSupport.Outcome {
        try TestSupport.run(
            crasher, ["none", "--data-dir", work + "/data", "--dsn", dsn, "--swift-backtrace-dir", logs],
            environment: ["SWIFT_BACKTRACE": "enable=no"])
    }

    func events(_ server: ScriptedHTTPServer) -> [JSONValue] {
        server.requests.compactMap { try? Envelope.parse($0.body) }.flatMap(\.items).filter { $0.type == "event" }
            .compactMap { try? JSONValue.parse($0.payload) }
    }

    func testEachLogIsSentOnceAsACrashEventWithAllThreadsAndImages() throws {
        let logs = work + "/logs"
        let program = try SwiftCrashLogs.build("thread-crash", in: work)
        let crash = try SwiftCrashLogs.crash(program, logDirectory: logs)
        XCTAssertEqual(crash.outcome.signal, SIGILL, crash.outcome.description)
        let log = try SwiftBacktraceLog.parse(Data(contentsOf: URL(fileURLWithPath: crash.log)))
        try Data("{\"kind\": \"crashReport\", \"threads\": [".utf8).write(to: URL(fileURLWithPath: logs + "/being-written.json"))

        let server = try ScriptedHTTPServer()
        let first = try launch(logs: logs, dsn: server.dsn())
        XCTAssertEqual(first.exitCode, 0, first.description)
        let summary = try JSONValue.parse(Data(first.stdout.utf8))
        XCTAssertEqual(summary["converted"]?.arrayValue?.count, 1, first.stdout)
        XCTAssertEqual(summary["set_aside"]?.arrayValue, [], "a fresh unreadable log may still be being written: left alone")

        let fatal = events(server).filter { $0["level"]?.stringValue == "fatal" }
        XCTAssertEqual(fatal.count, 1, "\(events(server))")
        let e = try XCTUnwrap(fatal.first)
        XCTAssertEqual(e["event_id"], summary["converted"]?[0])
        XCTAssertEqual(e["platform"]?.stringValue, "native")
        XCTAssertEqual(e["release"]?.stringValue, "crasher@1.0")
        XCTAssertEqual(e["sdk"]?["name"]?.stringValue, "faultline.swift")
        let ex = try XCTUnwrap(e["exception"]?["values"]?[0])
        XCTAssertEqual(ex["type"]?.stringValue, "Swift fatal error", e.jsonString)
        XCTAssertTrue(ex["mechanism"]?["data"]?["file"]?.stringValue?.hasSuffix("thread-crash.swift") ?? false, e.jsonString)
        XCTAssertTrue((ex["stacktrace"]?["frames"]?.arrayValue ?? []).contains { ($0["function"]?.stringValue ?? "").contains("swiftLogFixtureWorker") })
        let threads = e["threads"]?["values"]?.arrayValue ?? []
        // Every thread the log holds (Swift's backtracer usually captures both here, but not
        // always the idle main thread: that is its doing, not the conversion's).
        XCTAssertEqual(threads.count, log.threads.count)
        XCTAssertGreaterThanOrEqual(threads.count, 1)
        XCTAssertEqual(threads.filter { $0["crashed"]?.boolValue == true }.count, 1)
        let images = e["debug_meta"]?["images"]?.arrayValue ?? []
        let exe = try XCTUnwrap(images.first { $0["code_file"]?.stringValue == program }, e.jsonString)
        XCTAssertEqual(exe["code_id"]?.stringValue, log.images.first { $0.path == program }?.buildID?.hex)
        XCTAssertNotNil(exe["debug_id"]?.stringValue)
        XCTAssertFalse(FileManager.default.fileExists(atPath: crash.log), "a converted log is deleted")
        XCTAssertTrue(FileManager.default.fileExists(atPath: logs + "/being-written.json"))

        // Next launch: nothing new to send.
        let second = try launch(logs: logs, dsn: server.dsn())
        XCTAssertEqual(try JSONValue.parse(Data(second.stdout.utf8))["converted"]?.arrayValue, [])
        XCTAssertEqual(events(server).filter { $0["level"]?.stringValue == "fatal" }.count, 1)
    }

    func testAnOldUnreadableLogIsSetAsideNotRetriedForever() throws {
        let logs = work + "/logs"
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        let cut = logs + "/cut.json"
        try Data("{\"kind\": \"crashReport\", \"threads\": [ { \"crashed\"".utf8).write(to: URL(fileURLWithPath: cut))
        let old = Date(timeIntervalSinceNow: -3600)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: cut)
        let server = try ScriptedHTTPServer()
        let o = try launch(logs: logs, dsn: server.dsn())
        let summary = try JSONValue.parse(Data(o.stdout.utf8))
        XCTAssertEqual(summary["set_aside"]?.arrayValue?.count, 1, o.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cut))
        XCTAssertTrue(FileManager.default.fileExists(atPath: work + "/data/crashes/corrupt/swift-backtrace-cut.json"))
        XCTAssertTrue(events(server).filter { $0["level"]?.stringValue == "fatal" }.isEmpty)
    }
}
