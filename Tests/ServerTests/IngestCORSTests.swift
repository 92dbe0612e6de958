// Browser SDKs send from a page's origin: the ingest endpoints must answer the browser's CORS
// preflight and let the page read every answer (accepted, refused, rate-limited), as Sentry's
// ingestion does, while the API below /api/0/ (server tokens) stays closed to other origins.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IngestCORSTests: XCTestCase {
    func testPreflightAndEveryIngestAnswerCarryCORSHeaders() throws {
        let server = try TestServer()
        defer { server.stop() }
        let path = "/api/\(server.projectID)/envelope/"
        let preflight = RawHTTP.send(
            port: server.port, method: "OPTIONS", path: path,
            headers: [
                "Origin": "https://shop.example", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-sentry-auth"
            ])
        XCTAssertEqual(preflight.status, 200, preflight.text)
        XCTAssertEqual(preflight.headers["access-control-allow-origin"], "*")
        let allowed = preflight.headers["access-control-allow-headers"] ?? ""
        for header in ["x-sentry-auth", "content-type", "content-encoding"] { XCTAssertTrue(allowed.contains(header), allowed) }
        XCTAssertTrue(preflight.headers["access-control-allow-methods"]?.contains("POST") == true)

        // Accepted, and refused before the body is read: both readable by the page.
        let event: JSONValue = ["event_id": .string(TestEvents.eventID()), "platform": "javascript", "message": "from a page"]
        let accepted = RawHTTP.send(
            port: server.port, method: "POST", path: path + "?sentry_key=\(server.publicKey)&sentry_version=7",
            headers: ["Origin": "https://shop.example", "Content-Type": "text/plain;charset=UTF-8"], body: TestEvents.envelope(event))
        XCTAssertEqual(accepted.status, 200, accepted.text)
        XCTAssertEqual(accepted.headers["access-control-allow-origin"], "*")
        XCTAssertTrue(accepted.headers["access-control-expose-headers"]?.contains("x-sentry-rate-limits") == true)
        let refused = RawHTTP.send(
            port: server.port, method: "POST", path: path + "?sentry_key=0123456789abcdef0123456789abcdef",
            headers: ["Origin": "https://shop.example"], body: TestEvents.envelope(event))
        XCTAssertEqual(refused.status, 401, refused.text)
        XCTAssertEqual(refused.headers["access-control-allow-origin"], "*")

        // The token-guarded API is not opened to pages.
        let api = RawHTTP.send(port: server.port, method: "OPTIONS", path: "/api/0/projects/", headers: ["Origin": "https://shop.example"])
        XCTAssertNotEqual(api.status, 200)
        XCTAssertNil(api.headers["access-control-allow-origin"])
    }

    /// A real browser: a page on another origin (`localhost` against the server's `127.0.0.1`)
    /// sends an envelope with `X-Sentry-Auth`, which makes Chromium send a preflight first, and
    /// reads the answer, as sentry-javascript's fetch transport does.
    func testABrowserPageOnAnotherOriginSendsAndReadsTheAnswer() throws {
        let server = try TestServer()
        defer { server.stop() }
        let eventID = TestEvents.eventID()
        let event: JSONValue = ["event_id": .string(eventID), "platform": "javascript", "message": "sent by a page"]
        let envelope = String(decoding: TestEvents.envelope(event), as: UTF8.self)
        let url = "http://127.0.0.1:\(server.port)/api/\(server.projectID)/envelope/"
        let auth = "Sentry sentry_version=7, sentry_client=sentry.javascript.browser/8.0.0, sentry_key=\(server.publicKey)"
        func js(_ text: String) -> String { String(decoding: JSONValue.string(text).serialized(), as: UTF8.self) }
        let send = """
            (async () => {
              const r = await fetch(\(js(url)), {method: "POST",
                headers: {"Content-Type": "application/x-sentry-envelope", "X-Sentry-Auth": \(js(auth))},
                body: \(js(envelope))});
              return {status: r.status, body: await r.text(), origin: location.origin};
            })()
            """
        let result = try Browser.run([
            ["op": "goto", "url": .string("http://localhost:\(server.port)/health")],
            ["op": "eval", "expr": .string(send), "save": "sent"]
        ])
        let sent = result.values["sent"]
        XCTAssertEqual(sent?["origin"]?.stringValue, "http://localhost:\(server.port)", "the page is on another origin")
        XCTAssertEqual(sent?["status"]?.int64Value, 200, "\(sent ?? .null)")
        XCTAssertTrue(sent?["body"]?.stringValue?.contains(eventID) == true, "\(sent ?? .null)")
        try server.waitUntilIdle()
        XCTAssertEqual(try server.storedCount(), 1)
    }
}
