// Events whose list containers come in the other forms Sentry reads: sentry-go sends
// `exception` and `threads` as bare arrays, some SDKs one exception object without `values`, old
// ones the legacy interface names. Each must group and title by its exception and stack, as the
// protocol's `{"values": [...]}` form does, and keep every other member.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class SentryValuesIngestTests: XCTestCase {
    private func goError(_ type: String, _ value: String, function: String) -> JSONValue {
        [
            "type": .string(type), "value": .string(value), "module": "io/fs",
            "stacktrace": [
                "frames": [
                    ["function": "main", "module": "main", "abs_path": "/src/app/main.go", "lineno": 22, "in_app": true],
                    [
                        "function": .string(function), "module": "github.com/acme/app/config", "abs_path": "/src/app/config/config.go", "lineno": 41,
                        "in_app": true
                    ]
                ]
            ]
        ]
    }

    private func event(_ members: [String: JSONValue]) -> (String, JSONValue) {
        let id = TestEvents.eventID()
        var e: [String: JSONValue] = [
            "event_id": .string(id), "timestamp": .double(Date().timeIntervalSince1970), "level": "error",
            "breadcrumbs": ["values": [["category": "config", "message": "reading /etc/app.yaml"]]]
        ]
        for (k, v) in members { e[k] = v }
        return (id, .object(JSONObject(e)))
    }

    private func issues(_ server: TestServer) throws -> [JSONValue] {
        try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
    }

    private func issue(of eventID: String, _ server: TestServer) throws -> String? {
        try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(eventID)/")["issue"]?.stringValue
    }

    func testBareListsSingleObjectsAndLegacyNamesGroupByTheirException() throws {
        let server = try TestServer()
        defer { server.stop() }
        // sentry-go: bare arrays. The same error twice is one issue; another type is another.
        let (go1, e1) = event(["platform": "go", "exception": [goError("*fs.PathError", "open /etc/app.yaml: no such file", function: "loadConfig")]])
        let (go2, e2) = event(["platform": "go", "exception": [goError("*fs.PathError", "open /etc/other.yaml: no such file", function: "loadConfig")]])
        let (go3, e3) = event(["platform": "go", "exception": [goError("*json.SyntaxError", "invalid character", function: "parseConfig")]])
        // One exception object without `values` (Relay reads it as a one-element list).
        let (single, e4) = event(["platform": "ruby", "exception": ["type": "NoMethodError", "value": "undefined method `name' for nil"]])
        // The crashing stack only in a bare-list `threads`.
        let native: JSONValue = [
            "id": 1, "crashed": true,
            "stacktrace": [
                "frames": [["function": "main", "package": "/usr/bin/demo"], ["function": "parse_header", "package": "/usr/bin/demo", "in_app": true]]
            ]
        ]
        let (threads, e5) = event(["platform": "native", "threads": [native]])
        // raven-era legacy name.
        let (legacy, e6) = event([
            "platform": "python",
            "sentry.interfaces.Exception": ["values": [["type": "ZeroDivisionError", "value": "division by zero"]]]
        ])
        for e in [e1, e2, e3, e4, e5, e6] {
            let r = server.sendEnvelope(TestEvents.envelope(e))
            XCTAssertEqual(r.status, 200, r.text)
        }
        try server.waitUntilIdle()

        let byID = try Dictionary(uniqueKeysWithValues: [go1, go2, go3, single, threads, legacy].map { ($0, try XCTUnwrap(try issue(of: $0, server), $0)) })
        XCTAssertEqual(byID[go1], byID[go2], "the same Go error is one issue")
        XCTAssertEqual(Set(byID.values).count, 5, "every other shape is its own issue: \(byID)")
        let titles = try Dictionary(uniqueKeysWithValues: issues(server).map { ($0["id"]?.stringValue ?? "", $0["title"]?.stringValue ?? "") })
        XCTAssertTrue(titles[byID[go1]!]?.hasPrefix("*fs.PathError") == true, "\(titles)")
        XCTAssertTrue(titles[byID[go3]!]?.hasPrefix("*json.SyntaxError") == true, "\(titles)")
        XCTAssertTrue(titles[byID[single]!]?.hasPrefix("NoMethodError") == true, "\(titles)")
        XCTAssertTrue(titles[byID[threads]!]?.contains("parse_header") == true, "the bare-list thread's stack names it: \(titles)")
        XCTAssertTrue(titles[byID[legacy]!]?.hasPrefix("ZeroDivisionError") == true, "\(titles)")
        XCTAssertTrue(titles[byID[go1]!]?.contains("in loadConfig") == true, "the Go stack is read: \(titles)")

        // Stored in the protocol's form, with every other member kept.
        let stored = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(go1)/")["event"] ?? .null
        let text = String(decoding: stored.serialized(), as: UTF8.self)
        XCTAssertEqual(stored["exception"]?["values"]?[0]?["type"]?.stringValue, "*fs.PathError", text.prefix(400).description)
        XCTAssertTrue(text.contains("reading /etc/app.yaml"), "breadcrumbs kept: \(text.prefix(600))")
        let legacyText = String(
            decoding: try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(legacy)/")["event"]?.serialized() ?? Data(), as: UTF8.self)
        XCTAssertFalse(legacyText.contains("sentry.interfaces.Exception"), legacyText.prefix(600).description)
    }
}
