// A key or token the store cannot look up (database down, table gone) is answered 503 with
// Retry-After, never 401: SDKs treat 401 as permanent and drop the events they hold. /health
// says degraded meanwhile.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class CredentialLookupOutageTests: XCTestCase {
    /// A restarted server (its key cache empty) whose credential tables were taken away from
    /// another connection, so every lookup of a key or token fails in the database.
    private func serverThatCannotLookUpCredentials() throws -> TestServer {
        let python = try XCTUnwrap(ThirdParty.python(), "python3 is needed to break the server's database (tools/setup installs it)")
        let first = try TestServer()
        first.stop(removeData: false)
        let server = try TestServer(dataDirectory: first.dataDirectory, restarting: first.bootstrap)
        let rename = "ALTER TABLE public_keys RENAME TO public_keys_gone; ALTER TABLE server_tokens RENAME TO server_tokens_gone"
        if let url = try TestDatabase.url(forDataDirectory: server.dataDirectory) {
            let r = try TestSupport.run("/usr/bin/psql", ["-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", rename])
            XCTAssertEqual(r.exitCode, 0, r.description)
        } else {
            _ = try TestSupport.shell(
                "'\(python)' -c \"import sqlite3; c = sqlite3.connect('\(server.dataDirectory)/faultline.sqlite'); c.executescript('\(rename)'); c.commit()\"")
        }
        return server
    }

    private func assertRetryLater(_ r: RawHTTP.Response, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 503, "\(what): \(r.text)", file: file, line: line)
        XCTAssertNotNil(r.headers["retry-after"], "\(what) has no Retry-After", file: file, line: line)
    }

    func testAValidKeyIsAnsweredRetryLaterWhileTheStoreCannotLookItUp() throws {
        let server = try serverThatCannotLookUpCredentials()
        defer { server.stop() }
        assertRetryLater(server.sendEnvelope(TestEvents.envelope(["message": "held by the SDK"])), "envelope")
        let store = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/store/?sentry_key=\(server.publicKey)",
            headers: ["Content-Type": "application/json"], body: Data(#"{"message":"x"}"#.utf8))
        assertRetryLater(store, "store endpoint")
    }

    func testAServerTokenIsAnsweredRetryLaterWhileTheStoreCannotCheckIt() throws {
        let server = try serverThatCannotLookUpCredentials()
        defer { server.stop() }
        assertRetryLater(server.get("/api/0/projects/"), "API read")
        let upload = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/organizations/faultline/chunk-upload/",
            headers: ["Authorization": "Bearer \(server.token)"], body: Data("x".utf8))
        assertRetryLater(upload, "chunk upload")
    }

    func testHealthSaysDegradedWhileTheStoreFails() throws {
        let server = try serverThatCannotLookUpCredentials()
        defer { server.stop() }
        XCTAssertEqual(server.get("/health").json?["status"]?.stringValue, "ok")
        assertRetryLater(server.sendEnvelope(TestEvents.envelope(["message": "held by the SDK"])), "envelope")
        let health = try XCTUnwrap(server.get("/health").json)
        XCTAssertEqual(health["status"]?.stringValue, "degraded", "\(health)")
        XCTAssertEqual(health["refused"]?["store.unavailable"]?.int64Value, 1, "\(health)")
    }
}
