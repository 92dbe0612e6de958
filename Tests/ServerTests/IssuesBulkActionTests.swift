// The issues list acts on the rows a person ticks (issue 33 item 4): resolve, ignore, reopen, and
// merge by selection instead of typing an issue number. A form without script: checkboxes, the
// session's CSRF token, a POST answered by a redirect back to the same list.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssuesBulkActionTests: XCTestCase {
    /// Three unrelated crashes: three issues, named by their innermost function.
    func seedThreeIssues(_ server: TestServer) throws -> [String: IssueRecord] {
        let crashes: [(String, Int)] = [("alpha_crash", 3), ("beta_crash", 2), ("gamma_crash", 1)]
        for (name, times) in crashes {
            let offset = UInt64(0x100 * (crashes.firstIndex { $0.0 == name }! + 1))
            for _ in 0..<times {
                server.ingest(TestEvents.native(offsets: [offset, offset + 0x40], functions: [name, name + "_caller"]))
            }
        }
        try server.waitUntilIdle()
        let issues = try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 10, offset: 0)
        XCTAssertEqual(issues.count, 3)
        var byName: [String: IssueRecord] = [:]
        for (name, _) in crashes { byName[name] = try XCTUnwrap(issues.first { $0.title.contains(name) }, "\(issues.map(\.title))") }
        return byName
    }

    func status(_ server: TestServer, _ id: Int64) throws -> IssueStatus { try XCTUnwrap(server.server.lifecycle).state(issueID: id).status }

    func testTickedIssuesAreResolvedThenMergedInTheBrowser() throws {
        let server = try TestServer()
        defer { server.stop() }
        let issues = try seedThreeIssues(server)
        let (alpha, beta, gamma) = (issues["alpha_crash"]!, issues["beta_crash"]!, issues["gamma_crash"]!)
        let base = "http://127.0.0.1:\(server.port)"
        func tick(_ ids: [Int64]) -> JSONValue {
            .string(
                "[\(ids.map(String.init).joined(separator: ","))].forEach(id => document.querySelector(`input[name=issue][value=\"${id}\"]`).checked = true); true"
            )
        }
        var steps = Browser.loginSteps(server)
        steps += [
            ["op": "goto", "url": .string(base + "/ui/projects/default/issues?sort=count")],
            ["op": "eval", "save": "boxes", "expr": "document.querySelectorAll('form.bulk input[type=checkbox][name=issue]').length"],
            ["op": "eval", "save": "tickBeforeResolve", "expr": tick([beta.id, gamma.id])],
            ["op": "submit", "selector": "form.bulk button[value=resolve]"],
            ["op": "eval", "save": "afterResolve", "expr": "location.pathname + location.search"],
            ["op": "eval", "save": "notice", "expr": "document.querySelector('.notice')?.textContent"],
            ["op": "eval", "save": "unresolvedLeft", "expr": "[...document.querySelectorAll('tr.issue .title a')].map(a => a.textContent)"],
            // Every issue, then merge the two ticked: the one with more occurrences keeps them all.
            ["op": "goto", "url": .string(base + "/ui/projects/default/issues?status=all&sort=count")],
            ["op": "eval", "save": "tickBeforeMerge", "expr": tick([alpha.id, gamma.id])],
            ["op": "submit", "selector": "form.bulk button[value=merge]"],
            ["op": "eval", "save": "mergeNotice", "expr": "document.querySelector('.notice')?.textContent"],
            [
                "op": "eval", "save": "allAfterMerge",
                "expr":
                    "[...document.querySelectorAll('tr.issue')].map(r => r.querySelector('.title a').textContent + '|' + r.querySelector('td.num').textContent)"
            ],
            ["op": "eval", "save": "scripts", "expr": "document.scripts.length"]
        ]
        let r = try Browser.run(steps)
        XCTAssertEqual(r.values["boxes"]?.int64Value, 3, "one checkbox per row")
        XCTAssertEqual(r.values["afterResolve"]?.stringValue?.hasPrefix("/ui/projects/default/issues?sort=count"), true, "back to the same list")
        XCTAssertEqual(r.values["notice"]?.stringValue, "2 issues resolved.")
        let left = (r.values["unresolvedLeft"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(left.count, 1, "\(left)")
        XCTAssertTrue(left.first?.contains("alpha_crash") == true, "\(left)")
        XCTAssertEqual(try status(server, beta.id), .resolved)
        XCTAssertEqual(try status(server, gamma.id), .resolved)
        XCTAssertEqual(try status(server, alpha.id), .unresolved)

        XCTAssertEqual(r.values["mergeNotice"]?.stringValue, "1 issue merged into issue \(alpha.id).")
        let rows = (r.values["allAfterMerge"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(rows.count, 2, "\(rows)")
        XCTAssertTrue(rows.contains { $0.contains("alpha_crash") && $0.hasSuffix("|4") }, "alpha holds gamma's occurrence: \(rows)")
        XCTAssertFalse(rows.contains { $0.contains("gamma_crash") }, "\(rows)")
        XCTAssertEqual(try server.server.store.issue(id: gamma.id)?.id, alpha.id, "gamma's id now reads as alpha")
        XCTAssertEqual(r.values["scripts"]?.int64Value, 0)
    }

    func testBulkFormsAreRefusedWithoutTheTokenAcrossProjectsAndWithTooFewToMerge() throws {
        let server = try TestServer()
        defer { server.stop() }
        let issues = try seedThreeIssues(server)
        let (alpha, beta) = (issues["alpha_crash"]!, issues["beta_crash"]!)
        let login = try XCTUnwrap(server.webLogin())
        let path = "/ui/projects/default/issues"
        func post(_ body: String, csrf: Bool = true) -> RawHTTP.Response {
            RawHTTP.send(
                port: server.port, method: "POST", path: path,
                headers: ["Cookie": login.cookie, "Content-Type": "application/x-www-form-urlencoded"],
                body: Data(((csrf ? "_csrf=\(login.csrf)&" : "") + body).utf8))
        }
        XCTAssertEqual(post("action=resolve&issue=\(alpha.id)", csrf: false).status, 403, "no CSRF token")
        XCTAssertEqual(post("action=resolve").status, 400, "nothing ticked")
        XCTAssertEqual(post("action=resolve&issue=\(alpha.id)&issue=999999").status, 400, "an id of no issue")
        XCTAssertEqual(post("action=merge&issue=\(alpha.id)").status, 400, "merging needs two")
        XCTAssertEqual(post("action=explode&issue=\(alpha.id)").status, 404)
        // Another project's issue cannot be reached through this project's list.
        let other = try server.server.stores.projects.createProject(slug: "other", name: "Other")
        XCTAssertEqual(
            RawHTTP.send(
                port: server.port, method: "POST", path: "/ui/projects/\(other.slug)/issues",
                headers: ["Cookie": login.cookie, "Content-Type": "application/x-www-form-urlencoded"],
                body: Data("_csrf=\(login.csrf)&action=resolve&issue=\(alpha.id)".utf8)
            ).status, 400)
        for id in [alpha.id, beta.id] { XCTAssertEqual(try status(server, id), .unresolved, "a refused form changed nothing") }

        let ignored = post("action=ignore&issue=\(alpha.id)&issue=\(beta.id)")
        XCTAssertEqual(ignored.status, 303)
        XCTAssertTrue(ignored.headers["location"]?.hasPrefix(path + "?") == true, "\(ignored.headers)")
        XCTAssertTrue(ignored.headers["location"]?.contains("done=ignore&n=2") == true)
        XCTAssertEqual(try status(server, alpha.id), .ignored)
        XCTAssertEqual(post("action=reopen&issue=\(alpha.id)").status, 303)
        XCTAssertEqual(try status(server, alpha.id), .unresolved)
    }
}
