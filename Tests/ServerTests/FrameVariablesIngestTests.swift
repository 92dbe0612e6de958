// Removing frames' `vars` for a project that did not opt in must remove nothing else: ingest
// parses only the members it reads, so the event written back without `vars` has to come from
// the whole event, not from that partial parse.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class FrameVariablesIngestTests: XCTestCase {
    func testRemovingFrameVariablesKeepsEveryOtherMember() throws {
        let server = try TestServer()
        defer { server.stop() }
        let eventID = "5f1a0c3e9b7d4e2f8a6c1b3d5e7f9a0b"
        let frame: JSONValue = [
            "function": "login", "module": "app.auth", "filename": "app/auth.py", "lineno": 12, "in_app": true,
            "vars": ["password": "hunter2-secret", "user": "alice"]
        ]
        let event: JSONValue = [
            "event_id": .string(eventID), "timestamp": .double(Date().timeIntervalSince1970), "platform": "python",
            "level": "error", "logger": "app.auth", "server_name": "web-7", "transaction": "/login",
            "sdk": ["name": "sentry.python", "version": "2.0.0"],
            "exception": ["values": [["type": "PermissionError", "value": "denied", "stacktrace": ["frames": [frame]]]]],
            "breadcrumbs": ["values": [["category": "auth", "message": "checking the password of alice"]]],
            "extra": ["attempt": 3], "request": ["url": "https://example.test/login", "method": "POST"],
            "modules": ["django": "5.0"]
        ]
        let r = server.sendEnvelope(TestEvents.envelope(event))
        XCTAssertEqual(r.status, 200, r.text)
        try server.waitUntilIdle()
        let stored = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(eventID)/")
        let text = String(decoding: stored.serialized(), as: UTF8.self)
        XCTAssertFalse(text.contains("hunter2"), "the frame's variables are not stored")
        XCTAssertFalse(text.contains("\"vars\""))
        // Everything else the client sent is there, whether or not ingest reads it.
        let kept = [
            "breadcrumbs": "checking the password of alice", "request": "https://example.test/login", "extra": "\"attempt\"",
            "sdk": "sentry.python", "server_name": "web-7", "the frame": "app/auth.py"
        ]
        for (member, value) in kept { XCTAssertTrue(text.contains(value), "\(member) lost: \(text.prefix(600))") }
    }
}
