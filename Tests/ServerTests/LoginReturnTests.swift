// Logging in goes back to the page that asked for it: a logged-out visit to a page redirects to
// the login form with that page (`next`), and the login redirects there. Only a local path under
// /ui/ is followed, never another site (no open redirect).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LoginReturnTests: XCTestCase {
    /// Logs in with the token through the form at `formPath`, posting the form's own `next` field
    /// (or `next` when given); returns the login's redirect target.
    func login(_ server: TestServer, formPath: String, next: String? = nil) throws -> String? {
        let form = RawHTTP.send(port: server.port, method: "GET", path: formPath)
        XCTAssertEqual(form.status, 200)
        let nonce = try XCTUnwrap(form.headers["set-cookie"]?.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
        var fields = "_login=\(nonce)&token=\(server.token)"
        let shown = form.text.range(of: "name=\"next\" value=\"").map { String(form.text[$0.upperBound...].prefix(while: { $0 != "\"" })) }
        if let value = next ?? shown?.replacingOccurrences(of: "&amp;", with: "&") {
            fields += "&next=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/ui/login",
            headers: ["Cookie": "fl_login=\(nonce)", "Content-Type": "application/x-www-form-urlencoded"], body: Data(fields.utf8))
        XCTAssertEqual(r.status, 303, r.text)
        return r.headers["location"]
    }

    func testLoginReturnsToThePageAskedFor() throws {
        let server = try TestServer()
        defer { server.stop() }
        let asked = RawHTTP.send(port: server.port, method: "GET", path: "/ui/issues/1?event=7")
        XCTAssertEqual(asked.status, 303)
        let loginForm = try XCTUnwrap(asked.headers["location"])
        XCTAssertTrue(loginForm.hasPrefix("/ui/login?next="), loginForm)
        XCTAssertEqual(try login(server, formPath: loginForm), "/ui/issues/1?event=7")
        XCTAssertEqual(try login(server, formPath: "/ui/login"), "/ui/projects", "no page asked for: the projects")
    }

    func testOnlyALocalPathUnderUIIsFollowed() throws {
        let server = try TestServer()
        defer { server.stop() }
        for hostile in [
            "https://evil.example/ui/", "//evil.example/ui/", "/\\evil.example/", "/ui/\r\nSet-Cookie: x=1", "/api/0/projects/", "ui/projects",
            "/ui/../../api/0/projects/", "/ui/%2e%2e/api/0/", "/ui/./x", "/ui//evil"
        ] {
            XCTAssertEqual(try login(server, formPath: "/ui/login", next: hostile), "/ui/projects", hostile)
            let encoded = hostile.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let form = RawHTTP.send(port: server.port, method: "GET", path: "/ui/login?next=" + encoded)
            XCTAssertFalse(form.text.contains("evil.example"), "the form does not carry \(hostile)")
        }
    }
}
