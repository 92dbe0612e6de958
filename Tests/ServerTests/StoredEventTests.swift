// How an acknowledged event is stored: a gzip'd envelope holding only the event is kept as the
// request body (no second compression); anything else is the event JSON compressed here. Either
// way the event reads back byte for byte as the client sent it.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class StoredEventTests: XCTestCase {
    var server: TestServer!
    override func setUpWithError() throws { server = try TestServer() }
    override func tearDown() { server?.stop() }

    /// Posts `envelope` gzip'd at `level`; returns the stored bytes and the event's bytes as sent.
    func store(_ envelope: Data, level: Int32 = 6) throws -> (stored: Data, body: Data, sent: Data) {
        let body = try XCTUnwrap(Deflate.gzip(envelope, level: level))
        let sent = try XCTUnwrap(EnvelopeReader.read(envelope).items.first { $0.type == "event" }).payload
        let id = try XCTUnwrap(JSONValue.parse(sent)["event_id"]?.stringValue)
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["Content-Encoding": "gzip", "X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(server.publicKey)"],
            body: body)
        XCTAssertEqual(r.status, 200, r.text)
        let o = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        XCTAssertEqual(try StoredEvent.json(o.compressedEvent), sent, "the event reads back as sent")
        return (o.compressedEvent, body, sent)
    }

    func event() -> JSONValue { TestEvents.native(offsets: (1...40).map { UInt64($0) * 0x40 }) }

    func testAGzipdEnvelopeHoldingOnlyTheEventIsStoredAsItCame() throws {
        let (stored, body, _) = try store(TestEvents.envelope(event()))
        XCTAssertEqual(stored, body)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues[0]?["count"]?.int64Value, 1, "grouped from the stored form too")
    }

    func testEnvelopesWithMoreThanTheEventAreCompressedHere() throws {
        let session = Envelope.Item(type: "session", payload: Data(#"{"sid":"a","init":true,"status":"ok"}"#.utf8))
        let attachment = Envelope.Item(type: "attachment", payload: Data(repeating: 0x61, count: 10_000))
        for extra in [[session], [attachment]] {
            let (stored, body, _) = try store(TestEvents.envelope(event(), extraItems: extra))
            XCTAssertNotEqual(stored, body)
            XCTAssertEqual(stored.first, 0x78, "zlib, compressed here")
        }
        // A client's gzip that hardly compresses (stored blocks) is compressed here as well.
        let (stored, body, _) = try store(TestEvents.envelope(event()), level: 0)
        XCTAssertNotEqual(stored, body)
        XCTAssertLessThan(stored.count, body.count)
    }
}
