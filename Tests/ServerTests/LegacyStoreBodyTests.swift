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
}
