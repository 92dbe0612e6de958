// raven-python's `/store/` body: the event zlib-compressed, then base64, no Content-Encoding.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LegacyStoreBodyTests: XCTestCase {
    func testRavensBase64ZlibBodyIsStoredAndGarbageIsRefusedClearly() throws {
        let server = try TestServer()
        defer { server.stop() }
        let id = TestEvents.eventID()
        let event: JSONValue = [
            "event_id": .string(id), "platform": "python", "level": "error", "project": "1",
            "sentry.interfaces.Message": ["message": "raven says %s", "params": ["hi"]],
            "exception": ["values": [["type": "ZeroDivisionError", "value": "integer division or modulo by zero"]]]
        ]
        // What raven-python's `encode` does: zlib.compress(json), then base64.
        let dir = TestSupport.makeTemporaryDirectory("raven-body")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try event.serialized().write(to: URL(fileURLWithPath: dir + "/event.json"))
        let python = try TestSupport.run(
            "/usr/bin/python3",
            ["-c", "import sys, zlib, base64; sys.stdout.write(base64.b64encode(zlib.compress(open(sys.argv[1], 'rb').read())).decode())", dir + "/event.json"])
        XCTAssertEqual(python.exitCode, 0, python.description)
        let headers = [
            "X-Sentry-Auth": "Sentry sentry_version=6, sentry_client=raven-python/6.10.0, sentry_key=\(server.publicKey)",
            "Content-Type": "application/octet-stream"
        ]
        let path = "/api/\(server.projectID)/store/"
        let r = RawHTTP.send(port: server.port, method: "POST", path: path, headers: headers, body: Data(python.stdout.utf8))
        XCTAssertEqual(r.status, 200, r.text)
        try server.waitUntilIdle()
        let stored = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")["event"]
        XCTAssertEqual(stored?["exception"]?["values"]?[0]?["type"]?.stringValue, "ZeroDivisionError")

        // Base64, but of no zlib stream ("hello world"): refused with what was expected.
        let garbage = RawHTTP.send(port: server.port, method: "POST", path: path, headers: headers, body: Data("aGVsbG8gd29ybGQ=".utf8))
        XCTAssertEqual(garbage.status, 400, garbage.text)
        XCTAssertTrue(garbage.text.contains("neither JSON nor base64"), garbage.text)
        XCTAssertEqual(try server.storedCount(), 1)
    }
    /// A transaction sent to /store/ (before envelopes, SDKs sent everything there) is stored
    /// with the traces, as an envelope's transaction item is, and makes no issue.
    func testATransactionSentToStoreIsATraceNotAnIssue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let id = TestEvents.eventID(), traceID = "4bf92f3577b34da6a3ce929d0e0e4736", start = Date().timeIntervalSince1970 - 5
        let transaction: JSONValue = [
            "type": "transaction", "event_id": .string(id), "transaction": "GET /checkout", "platform": "python",
            "start_timestamp": .double(start), "timestamp": .double(start + 0.5),
            "contexts": ["trace": ["trace_id": .string(traceID), "span_id": "00f067aa0ba902b7", "op": "http.server", "status": "ok"]],
            "spans": [
                [
                    "trace_id": .string(traceID), "span_id": "b7ad6b7169203331", "parent_span_id": "00f067aa0ba902b7", "op": "db",
                    "description": "SELECT 1", "start_timestamp": .double(start + 0.1), "timestamp": .double(start + 0.2)
                ]
            ]
        ]
        let headers = ["X-Sentry-Auth": "Sentry sentry_version=7, sentry_client=sentry.python/0.16.0, sentry_key=\(server.publicKey)"]
        let r = RawHTTP.send(port: server.port, method: "POST", path: "/api/\(server.projectID)/store/", headers: headers, body: transaction.serialized())
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertTrue(r.text.contains(id), "the answer names the transaction's id: \(r.text)")
        try server.waitUntilIdle()
        let trace = try server.server.stores.traces?.trace(projectID: server.projectID, traceID: traceID)
        XCTAssertEqual(Set(trace?.spans.map(\.spanID) ?? []), ["00f067aa0ba902b7", "b7ad6b7169203331"])
        XCTAssertEqual(try server.storedCount(), 0, "no error event")
        XCTAssertTrue(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 10, offset: 0).isEmpty)
    }
}
