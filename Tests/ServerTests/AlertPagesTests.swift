// The alert and lifecycle pages over real HTTP with a logged-in session: add a rule from the
// form, send a test to a real receiver and see its delivery; ignore and reopen an issue.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class AlertPagesTests: XCTestCase {
    func testAddARuleSendATestAndSeeTheDeliveryThenIgnoreAndReopenAnIssue() throws {
        let hook = try ScriptedHTTPServer()
        defer { hook.stop() }
        let server = try TestServer { $0.alerts.pollInterval = 3600 }
        defer { server.stop() }
        let login = try XCTUnwrap(server.webLogin())
        var page = server.page("/ui/projects/default/alerts", login)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("No rules yet"), page.text)

        let refused = server.postForm("/ui/projects/default/alerts/add", login, ["_csrf": login.csrf, "channel": "webhook", "target": "file:///etc/passwd"])
        XCTAssertEqual(refused.status, 400)
        XCTAssertTrue(refused.text.contains("http:// or https://"), refused.text)
        let added = server.postForm(
            "/ui/projects/default/alerts/add", login,
            ["_csrf": login.csrf, "channel": "webhook", "target": "http://127.0.0.1:\(hook.port)/in", "on": "new-issue,frequency:10/5"])
        XCTAssertEqual(added.status, 303, added.text)
        page = server.page("/ui/projects/default/alerts", login)
        XCTAssertTrue(page.text.contains("new-issue, frequency:10/5"), page.text)
        let rule = try XCTUnwrap(
            try server.server.alerts.map { try AlertAdministration(store: server.server.store, database: $0.database).rules(project: nil) }?.first)
        XCTAssertEqual(server.postForm("/ui/projects/default/alerts/test", login, ["_csrf": login.csrf, "rule": String(rule.id)]).status, 303)
        XCTAssertEqual(server.postForm("/ui/projects/default/alerts/test", login, ["rule": String(rule.id)]).status, 403, "no CSRF token, no test")
        server.server.alerts?.dispatcher.sendDue()
        XCTAssertEqual(hook.requests.count, 1)
        XCTAssertEqual(try JSONValue.parse(hook.requests[0].body)["kind"], "test")
        page = server.page("/ui/projects/default/alerts", login)
        XCTAssertTrue(page.text.contains("Test alert from Faultline") && page.text.contains(">sent<"), page.text)

        // The issue page's lifecycle forms.
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20], functions: ["main", "render"]))).status, 200)
        try server.waitUntilIdle()
        let id = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue?.first?["id"]?.stringValue)
        var issue = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(issue.contains("DEFAULT-\(id)") && issue.contains("Resolve in next release") && issue.contains(">Ignore<"), issue)
        XCTAssertEqual(server.postForm("/ui/issues/\(id)/ignore", login, ["_csrf": login.csrf, "events": "100"]).status, 303)
        issue = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(issue.contains("ignored for 100 more events"), issue)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["statusDetails"]?["ignoreCount"]?.int64Value, 100)
        XCTAssertEqual(server.postForm("/ui/issues/\(id)/reopen", login, ["_csrf": login.csrf]).status, 303)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["status"]?.stringValue, "unresolved")
    }
}
