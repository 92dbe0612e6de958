// The issue page shows the event data people look for: who it happened to (`user`), the
// event's `extra`, and a breadcrumb's `data` beside its message. Every value is escaped, an
// object or array as compact JSON, each bounded in size.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssuePageEventDataTests: XCTestCase {
    func testUserExtraAndBreadcrumbDataAreShownEscapedAndBounded() throws {
        let server = try TestServer()
        defer { server.stop() }
        var e = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
        e["user"] = ["id": "user-42", "email": "ada@example.com", "username": "<b>ada</b>", "ip_address": "203.0.113.9"]
        e["extra"] = ["cart": ["items": 3, "total": "9.90"], "retries": 2, "huge": .string(String(repeating: "x", count: 100_000))]
        e["breadcrumbs"] = [
            "values": [["category": "http", "message": "GET /checkout", "data": ["status_code": 502, "url": "/checkout?<i>"]]]
        ]
        server.ingest(e)
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        let page = server.page("/ui/issues/\(id)", login)
        XCTAssertEqual(page.status, 200)
        let html = page.text
        for shown in ["user-42", "ada@example.com", "&lt;b&gt;ada&lt;/b&gt;", "203.0.113.9"] {
            XCTAssertTrue(html.contains(shown), "the user's \(shown) is shown")
        }
        XCTAssertTrue(html.contains("<h2>Extra</h2>"))
        XCTAssertTrue(html.contains("{&quot;items&quot;:3,&quot;total&quot;:&quot;9.90&quot;}"), "an object as compact JSON")
        XCTAssertTrue(html.contains("retries"))
        XCTAssertFalse(html.contains(String(repeating: "x", count: 5000)), "a long value is clipped")
        XCTAssertTrue(html.contains("GET /checkout"))
        XCTAssertTrue(html.contains("&quot;status_code&quot;:502"), "the breadcrumb's data beside its message")
        XCTAssertTrue(html.contains("/checkout?&lt;i&gt;"))
        XCTAssertFalse(html.contains("<i>") || html.contains("<b>ada"))
    }

    /// A web backend's request, as the real Python SDK's WSGI integration sends it (method, URL,
    /// query, headers, environment): every part shown, escaped; what the SDK scrubbed (the cookie)
    /// as it sent it.
    func testAWebRequestFromThePythonSDKIsShownWhole() throws {
        let server = try TestServer()
        defer { server.stop() }
        let script = """
            import sys, sentry_sdk
            from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, send_default_pii=True)
            def app(environ, start_response):
                raise ValueError("checkout exploded")
            environ = {
                "REQUEST_METHOD": "POST", "PATH_INFO": "/checkout/<b>", "QUERY_STRING": "cart=42&coupon=<i>x</i>",
                "SERVER_NAME": "shop.example", "SERVER_PORT": "443", "wsgi.url_scheme": "https", "SERVER_PROTOCOL": "HTTP/1.1",
                "HTTP_HOST": "shop.example", "HTTP_USER_AGENT": "curl/8.0 <script>", "HTTP_COOKIE": "session=abc123",
                "REMOTE_ADDR": "198.51.100.7", "wsgi.input": None, "wsgi.errors": sys.stderr,
            }
            try:
                SentryWsgiMiddleware(app)(environ, lambda status, headers: None)
            except ValueError:
                pass
            sentry_sdk.flush(10)
            """
        try ThirdParty.runPython(script, dsn: server.dsn)
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        let html = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(html.contains("<h2>Request</h2>"), html)
        XCTAssertTrue(html.contains("<code>POST <a href=\"https://shop.example/checkout/&lt;b&gt;\""), html)
        XCTAssertTrue(html.contains("cart=42&amp;coupon=&lt;i&gt;x&lt;/i&gt;"), "the query")
        XCTAssertTrue(html.contains("<h3>Headers</h3>") && html.contains("curl/8.0 &lt;script&gt;"), "the headers")
        XCTAssertTrue(html.contains("<dt>Cookie</dt><dd>[Filtered]</dd>"), "what the SDK scrubbed stays scrubbed")
        let request = try XCTUnwrap(html.components(separatedBy: "<h2>Request</h2>").last?.components(separatedBy: "<h2>").first)
        XCTAssertFalse(request.contains("abc123"), request)
        XCTAssertTrue(html.contains("<h3>Environment</h3>") && html.contains("198.51.100.7"), "the environment")
        XCTAssertFalse(html.contains("<script>"), "nothing unescaped")
        XCTAssertFalse(html.contains("<i>x"), "nothing unescaped")
    }
}
