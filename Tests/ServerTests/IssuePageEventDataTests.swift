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
}
