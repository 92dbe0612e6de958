// Helpers for the web page tests: logging in over raw HTTP (cookie + CSRF token), seeding a
// store through the real ingest endpoint, and running headless Chromium (Tests/Browser/browser.py).
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

struct WebLogin {
    let cookie: String
    let csrf: String
}

extension TestServer {
    /// Logs in with the server token the way the login form does; fails the test if it cannot.
    func webLogin(file: StaticString = #filePath, line: UInt = #line) -> WebLogin? { Self.webLogin(port: port, token: token, file: file, line: line) }

    /// The same against any server on loopback (a `faultline serve` process, a node of several).
    static func webLogin(port: UInt16, token: String, file: StaticString = #filePath, line: UInt = #line) -> WebLogin? {
        let form = RawHTTP.send(port: port, method: "GET", path: "/ui/login")
        guard let set = form.headers["set-cookie"], let nonce = set.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last else {
            XCTFail("login form sets no nonce cookie", file: file, line: line); return nil
        }
        let body = "_login=\(nonce)&token=\(token)"
        let r = RawHTTP.send(
            port: port, method: "POST", path: "/ui/login",
            headers: ["Cookie": "fl_login=\(nonce)", "Content-Type": "application/x-www-form-urlencoded"], body: Data(body.utf8))
        XCTAssertEqual(r.status, 303, r.text, file: file, line: line)
        guard let session = r.headers["set-cookie"]?.split(separator: ";").first.map(String.init) else {
            XCTFail("login set no session cookie", file: file, line: line); return nil
        }
        let page = RawHTTP.send(port: port, method: "GET", path: "/ui/projects", headers: ["Cookie": session])
        guard let range = page.text.range(of: "name=\"_csrf\" value=\"") else { XCTFail("no CSRF field on a page", file: file, line: line); return nil }
        let csrf = String(page.text[range.upperBound...].prefix(while: { $0 != "\"" }))
        return WebLogin(cookie: session, csrf: csrf)
    }

    func page(_ path: String, _ login: WebLogin) -> RawHTTP.Response {
        RawHTTP.send(port: port, method: "GET", path: path, headers: ["Cookie": login.cookie])
    }

    func postForm(_ path: String, _ login: WebLogin?, _ fields: [String: String]) -> RawHTTP.Response {
        let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        if let login { headers["Cookie"] = login.cookie }
        return RawHTTP.send(port: port, method: "POST", path: path, headers: headers, body: Data(body.utf8))
    }

    /// Sends an event plus extra items (logs, sessions) and expects 200.
    func ingest(_ event: JSONValue, items: [Envelope.Item] = [], file: StaticString = #filePath, line: UInt = #line) {
        let r = sendEnvelope(TestEvents.envelope(event, extraItems: items))
        XCTAssertEqual(r.status, 200, r.text, file: file, line: line)
    }
}

enum WebItems {
    static func log(_ lines: [(level: String, body: String, release: String)], trace: String, at t: Double) -> Envelope.Item {
        let items: [JSONValue] = lines.map { l in
            [
                "timestamp": .double(t), "trace_id": .string(trace), "level": .string(l.level), "body": .string(l.body),
                "attributes": ["sentry.release": ["value": .string(l.release), "type": "string"]]
            ]
        }
        return Envelope.Item(type: "log", payload: JSONValue.object(["items": .array(items)]).serialized())
    }

    static func session(release: String, environment: String, crashed: Bool) -> Envelope.Item {
        let s: JSONValue = [
            "sid": .string(UUID().uuidString), "init": true, "status": .string(crashed ? "crashed" : "exited"),
            "attrs": ["release": .string(release), "environment": .string(environment)]
        ]
        return Envelope.Item(type: "session", payload: s.serialized())
    }
}

/// Headless Chromium through Tests/Browser/browser.py. A missing browser is a failure, not a
/// skip: tools/setup and .ci/run install Debian's chromium.
enum Browser {
    struct Result {
        var values: [String: JSONValue]
        var requests: [String]
        var dialogs: [String]
        var error: String?
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Browser/browser.py").path
    }

    static func run(_ steps: [JSONValue], file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let dir = TestSupport.makeTemporaryDirectory("faultline-browser")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let stepsPath = dir + "/steps.json", resultPath = dir + "/result.json"
        try JSONValue.array(steps).serialized().write(to: URL(fileURLWithPath: stepsPath))
        let out = try TestSupport.run("/usr/bin/python3", [script, stepsPath, resultPath], timeout: 120)
        guard let data = FileManager.default.contents(atPath: resultPath), let j = try? JSONValue.parse(data) else {
            XCTFail("browser driver produced no result: \(out)", file: file, line: line)
            struct NoResult: Error {}
            throw NoResult()
        }
        let r = Result(
            values: j["values"]?.objectValue?.dictionary ?? [:], requests: (j["requests"]?.arrayValue ?? []).compactMap(\.stringValue),
            dialogs: (j["dialogs"]?.arrayValue ?? []).compactMap(\.stringValue), error: j["error"]?.stringValue)
        if let e = r.error { XCTFail("browser: \(e)", file: file, line: line) }
        return r
    }

    static func loginSteps(_ server: TestServer) -> [JSONValue] {
        let base = "http://127.0.0.1:\(server.port)"
        return [
            ["op": "goto", "url": .string(base + "/ui/login")],
            ["op": "fill", "selector": "#token", "value": .string(server.token)],
            ["op": "submit", "selector": "form.login button[type=submit]"]
        ]
    }

}
