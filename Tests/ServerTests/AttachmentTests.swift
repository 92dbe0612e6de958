// Envelope attachments: the real Python sentry-sdk's `add_attachment` items stored with their
// event, listed in the event API and on the issue page, downloadable with a server token or a web
// session only; caps, hostile names and retention with raw envelopes.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class AttachmentTests: XCTestCase {
    func testPythonSentrySDKAttachmentsAreStoredListedAndDownloadable() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else { return XCTFail("sentry-sdk is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-attach")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, sentry_sdk
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, release="py@1.0")
            scope = sentry_sdk.get_current_scope()
            scope.add_attachment(bytes=b"line one\\nline two\\n", filename="app.log", content_type="text/plain")
            scope.add_attachment(bytes=b"\\x89PNG\\r\\n\\x1a\\nnot really", filename="shot.png", content_type="image/png")
            print(sentry_sdk.capture_message("with attachments"))
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let id = try XCTUnwrap(r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.count == 32 })
        try server.waitUntilIdle()

        let base = "/api/0/projects/faultline/\(server.projectID)/events/\(id)"
        let event = try server.getJSON(base + "/")
        let listed = try XCTUnwrap(event["attachments"]?.arrayValue)
        XCTAssertEqual(listed.compactMap { $0["name"]?.stringValue }, ["app.log", "shot.png"])
        XCTAssertEqual(listed.first?["size"]?.int64Value, 18)
        XCTAssertEqual(try server.getJSON(base + "/attachments/").arrayValue?.count, 2)

        let log = try XCTUnwrap(listed[0]["download"]?.stringValue)
        let got = server.get(log)
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.text, "line one\nline two\n")
        XCTAssertEqual(got.headers["content-type"], "application/octet-stream")
        XCTAssertEqual(got.headers["content-disposition"], "attachment; filename=\"app.log\"; filename*=UTF-8''app.log")
        XCTAssertEqual(got.headers["x-content-type-options"], "nosniff")
        let png = server.get(try XCTUnwrap(listed[1]["download"]?.stringValue))
        XCTAssertEqual(png.headers["content-type"], "image/png")
        XCTAssertTrue(png.headers["content-disposition"]?.hasPrefix("attachment;") == true)

        // Neither a stranger nor a public key may download.
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: log).status, 401)
        XCTAssertEqual(server.get(log, token: server.publicKey).status, 401)

        // The issue page lists them; the page's link downloads for the session, not without it.
        let issue = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue?.first?["id"]?.stringValue)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue)", login).text
        XCTAssertTrue(page.contains("<h2>Attachments</h2>") && page.contains("app.log") && page.contains("shot.png"), page)
        let link = try XCTUnwrap(page.range(of: "/ui/attachments/[0-9]+/[0-9]+", options: .regularExpression).map { String(page[$0]) })
        let viaPage = server.page(link, login)
        XCTAssertEqual(viaPage.status, 200)
        XCTAssertEqual(viaPage.text, "line one\nline two\n")
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: link).status, 303)  // to the login page
    }

    /// An attachment too large for the server (the SDKs' own limits are larger: a mobile app's log
    /// file) is left out, and the crash it came with is kept and says what was left out; refusing
    /// the envelope lost the crash for good (SDKs do not send a 413 again).
    func testAnOversizedAttachmentIsLeftOutAndItsEventKept() throws {
        let server = try TestServer()
        defer { server.stop() }
        let limits = IngestLimits()
        let cap = try XCTUnwrap(limits.maxItemBytes["attachment"])
        let small = Envelope.Item(type: "attachment", payload: Data("last words".utf8), extra: ["filename": "app.log"])
        let tooBig = Envelope.Item(type: "attachment", payload: Data(count: cap + 1), extra: ["filename": "big.dmp"])
        let event = TestEvents.native(offsets: [0x10])
        let id = try XCTUnwrap(event["event_id"]?.stringValue)
        let r = server.sendEnvelope(TestEvents.envelope(event, extraItems: [tooBig, small]))
        XCTAssertEqual(r.status, 200, r.text)
        try server.waitUntilIdle()
        let stored = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
        XCTAssertEqual(stored["attachments"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["app.log"], stored.jsonString)
        let errors = stored["event"]?["errors"]?.arrayValue ?? []
        XCTAssertEqual(errors.count, 1, stored.jsonString)
        XCTAssertEqual(errors.first?["type"]?.stringValue, "too_large")
        XCTAssertTrue(errors.first?["value"]?.stringValue?.hasPrefix("big.dmp: \(cap + 1) bytes") == true, "\(errors)")

        // Each under its cap, together over the envelope's kept total: what fits is kept, the rest
        // is left out and named; never more than the total is kept.
        let whole = Envelope.Item(type: "attachment", payload: Data(count: cap), extra: ["filename": "a.bin"])
        let second = TestEvents.native(offsets: [0x10])
        let secondID = try XCTUnwrap(second["event_id"]?.stringValue)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(second, extraItems: [whole, whole, whole])).status, 200)
        try server.waitUntilIdle()
        let both = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(secondID)/")
        let kept = both["attachments"]?.arrayValue?.count ?? 0
        let leftOut = both["event"]?["errors"]?.arrayValue?.count ?? 0
        XCTAssertEqual(kept + leftOut, 3, both.jsonString)
        XCTAssertGreaterThan(leftOut, 0)
        XCTAssertLessThanOrEqual(kept * cap, limits.maxKeptBytes)
        XCTAssertEqual(try server.storedCount(), 2)

        // An attachment without an event is accepted and not kept (it has nothing to belong to).
        let before = try server.server.stores.retention.retainedBytes()
        let lone = Envelope(header: [:], items: [Envelope.Item(type: "attachment", payload: Data("x".utf8), extra: ["filename": "x"])])
        XCTAssertEqual(server.sendEnvelope(lone.serialized()).status, 200)
        XCTAssertEqual(try server.server.stores.retention.retainedBytes(), before)
    }

    func testAHostileFilenameIsShownEscapedAndNeverUsedAsAPath() throws {
        let server = try TestServer()
        defer { server.stop() }
        let name = "../../etc/passwd\r\nSet-Cookie: x=1\t<script>alert(1)</script>é.html"
        let item = Envelope.Item(
            type: "attachment", payload: Data("<html><script>alert(1)</script>".utf8),
            extra: ["filename": .string(name), "content_type": "text/html", "attachment_type": "event.attachment"])
        let event = TestEvents.native(offsets: [0x10])
        let id = try XCTUnwrap(event["event_id"]?.stringValue)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event, extraItems: [item])).status, 200)
        try server.waitUntilIdle()

        let e = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
        let a = try XCTUnwrap(e["attachments"]?.arrayValue?.first)
        XCTAssertEqual(a["name"]?.stringValue, name)  // the API gives the client's text back, as JSON
        let got = server.get(try XCTUnwrap(a["download"]?.stringValue))
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.headers["content-type"], "application/octet-stream")
        let disposition = try XCTUnwrap(got.headers["content-disposition"])
        XCTAssertFalse(disposition.contains("/") || disposition.contains("\r") || disposition.contains("\n") || disposition.contains("<"), disposition)
        XCTAssertTrue(disposition.hasPrefix("attachment; filename=\"_._.._etc_passwd__Set-Cookie__x_1__script_alert_1___script__.html\""), disposition)
        XCTAssertNil(got.headers["set-cookie"])
        XCTAssertTrue(got.headers["content-security-policy"]?.contains("sandbox") == true)

        let issue = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue?.first?["id"]?.stringValue)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue)", login).text
        XCTAssertTrue(page.contains("../../etc/passwd[U+000D][U+000A]Set-Cookie: x=1[U+0009]&lt;script&gt;alert(1)&lt;/script&gt;é.html"), page)
        XCTAssertFalse(page.contains("<script>"))
        // Nothing in the data directory is named after it (attachments live in the database).
        let files = FileManager.default.enumerator(atPath: server.dataDirectory)?.allObjects.compactMap { $0 as? String } ?? []
        XCTAssertFalse(files.contains { $0.contains("passwd") }, "\(files)")
    }

    func testRetentionDeletesAttachmentsWithTheirEvent() throws {
        let server = try TestServer()
        defer { server.stop() }
        let event = TestEvents.native(offsets: [0x10])
        let id = try XCTUnwrap(event["event_id"]?.stringValue)
        // (Not `event.minidump`: 100 KB of zeros is no minidump, and a dump that cannot be read is refused.)
        let item = Envelope.Item(type: "attachment", payload: Data(count: 100_000), extra: ["filename": "core.bin", "attachment_type": "event.attachment"])
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event, extraItems: [item])).status, 200)
        try server.waitUntilIdle()
        let stores = server.server.stores
        let occurrence = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        XCTAssertEqual(try stores.attachments?.attachments(occurrenceID: occurrence.id).map(\.attachmentType), ["event.attachment"])
        XCTAssertGreaterThan(try stores.retention.retainedBytes(), 100_000)
        // The size cap sees the attachment as part of its occurrence.
        XCTAssertGreaterThan(try XCTUnwrap(try stores.retention.oldestRetained(limit: 1).first).bytes, 100_000)

        XCTAssertEqual(try stores.retention.deleteOccurrences(receivedBefore: 1e12, limit: 10), 1)
        XCTAssertEqual(try stores.attachments?.attachments(occurrenceID: occurrence.id).count, 0)
        XCTAssertEqual(try stores.retention.retainedBytes(), 0)
        let gone = server.get("/api/0/projects/faultline/\(server.projectID)/events/\(id)/attachments/1/?download=1")
        XCTAssertEqual(gone.status, 404)
    }

    /// A data directory from before attachments (schema 10) gains the table and its trigger at
    /// open, and an occurrence deleted by any statement takes its attachments along.
    func testASchema10DatabaseGainsAttachmentsDeletedWithTheirOccurrence() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-attach-migration")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/faultline.sqlite"
        try SQLiteStore(path: path).close()
        let c = try SQLiteConnection(path: path)
        try c.exec("DROP TRIGGER attachments_with_occurrence; DROP TABLE attachments; PRAGMA user_version=10")
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        var version = 0
        try c.query("PRAGMA user_version") { version = Int($0.int(0)) }
        XCTAssertEqual(version, SQLiteSchema.version)
        let a = IncomingAttachment(filename: "a.txt", contentType: "text/plain", attachmentType: nil, data: Data("hi".utf8))
        let e = IncomingEvent(
            projectID: 1, eventID: TestEvents.eventID(), received: 1000, timestamp: 1000, release: nil, installID: nil,
            compressedEvent: Data("{}".utf8), attachments: [a, a])
        let id = try XCTUnwrap(try store.storeIngest(event: e, items: []))
        XCTAssertEqual(try store.attachments(occurrenceID: id).map(\.filename), ["a.txt", "a.txt"])
        // The same event again stores nothing more.
        XCTAssertNil(try store.storeIngest(event: e, items: []))
        XCTAssertEqual(try store.attachments(occurrenceID: id).count, 2)
        try store.writer.sync { try $0.exec("DELETE FROM occurrences") }
        XCTAssertEqual(try store.attachments(occurrenceID: id).count, 0)
    }
}
