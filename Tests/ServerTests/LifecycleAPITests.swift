// The issue lifecycle and releases as real clients drive them: sentry-cli's `info`, `releases
// new|finalize|list|deploys`, `issues list|resolve|mute|unresolve`, and Sentry's bulk issue update
// over 500 ids.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LifecycleAPITests: XCTestCase {
    func put(_ server: TestServer, _ path: String, _ body: JSONValue) -> RawHTTP.Response {
        RawHTTP.send(port: server.port, method: "PUT", path: path, headers: ["Authorization": "Bearer \(server.token)"], body: Data(body.jsonString.utf8))
    }

    func testSentryCLIManagesReleasesAndIssues() throws {
        guard let cli = ThirdParty.executable("sentry-cli") else {
            return XCTFail("sentry-cli is not installed (tools/setup runs pip install sentry-cli)")
        }
        let server = try TestServer()
        defer { server.stop() }
        // Two issues first seen in 2.0 and one in 1.9; 2.0's last event is "pay" once more.
        for (n, function, release) in [(1, "pay", "app@2.0+build.7"), (2, "ship", "app@2.0+build.7"), (3, "bill", "app@1.9"), (1, "pay", "app@2.0+build.7")] {
            let e = TestEvents.native(offsets: [0x10, UInt64(0x100 * n)], release: release, functions: ["main", function])
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
            try server.waitUntilIdle()
        }
        try XCTUnwrap(server.server.alerts).evaluator.tick(periodic: false)  // what the evaluator's thread does every second
        let env = [
            "SENTRY_URL": "http://127.0.0.1:\(server.port)", "SENTRY_AUTH_TOKEN": server.token, "SENTRY_ORG": "faultline",
            "SENTRY_PROJECT": "default", "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "1"
        ]
        func run(_ args: [String]) throws -> TestSupport.Outcome {
            let o = try TestSupport.run(cli, args, environment: env, timeout: 60)
            XCTAssertEqual(o.exitCode, 0, "sentry-cli \(args.joined(separator: " ")): \(o)")
            return o
        }
        XCTAssertTrue(try run(["info"]).stdout.contains("Method: Auth Token"))
        // One server is one organization; its projects are sentry-cli's `projects list`.
        XCTAssertTrue(try run(["organizations", "list"]).stdout.contains("| faultline "))
        let projects = try run(["projects", "list"]).stdout
        XCTAssertTrue(projects.split(separator: "\n").contains { $0.contains("| default ") && $0.contains("| Default ") }, projects)
        let keys = try server.getJSON("/api/0/projects/faultline/default/keys/").arrayValue ?? []
        XCTAssertEqual(keys.compactMap { $0["dsn"]?["public"]?.stringValue }, [server.dsn], "the project's DSN, as the server printed it")
        XCTAssertTrue(try run(["releases", "new", "-p", "default", "app@2.0+build.7"]).stdout.contains("Created release app@2.0+build.7"))
        XCTAssertTrue(try run(["releases", "finalize", "app@2.0+build.7"]).stdout.contains("Finalized release app@2.0+build.7"))
        _ = try run(["releases", "deploys", "app@2.0+build.7", "new", "-e", "production", "-n", "blue"])
        let listed = try run(["releases", "list"]).stdout
        // sentry-cli's table: Released | Version | New Events | Last Event.
        func row(_ version: String) -> [String] {
            let line = listed.split(separator: "\n").first { $0.contains("| \(version) ") } ?? ""
            return line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        XCTAssertEqual(row("app@2.0+build.7").dropFirst().prefix(2), ["app@2.0+build.7", "2"], listed)
        XCTAssertEqual(row("app@1.9").dropFirst().prefix(2), ["app@1.9", "1"], listed)
        XCTAssertTrue(row("app@1.9").last?.hasSuffix("ago") == true, "a last event, not none: \(listed)")
        let deploys = try run(["releases", "deploys", "app@2.0+build.7", "list"]).stdout
        XCTAssertTrue(deploys.contains("production") && deploys.contains("blue"), deploys)
        let release = try server.getJSON("/api/0/organizations/faultline/releases/app@2.0+build.7/")
        XCTAssertNotEqual(release["dateReleased"], .null, "finalize set dateReleased")
        XCTAssertEqual(release["newGroups"]?.int64Value, 2, "\(release)")
        let older = try server.getJSON("/api/0/organizations/faultline/releases/app@1.9/")
        XCTAssertEqual(older["newGroups"]?.int64Value, 1, "\(older)")
        let (first, last) = (try XCTUnwrap(release["firstEvent"]?.stringValue), try XCTUnwrap(release["lastEvent"]?.stringValue))
        XCTAssertLessThan(first, last, "RFC 3339 in UTC orders as text")
        XCTAssertLessThan(try XCTUnwrap(older["lastEvent"]?.stringValue), last)

        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        XCTAssertEqual(issues.count, 3)
        XCTAssertEqual(issues.first?["project"]?["slug"]?.stringValue, "default", "Sentry's project object, not an id")
        let ids = issues.compactMap { $0["id"]?.stringValue }
        XCTAssertTrue(try run(["issues", "list"]).stdout.contains("DEFAULT-\(ids[0])"))
        _ = try run(["issues", "resolve", "-i", ids[0]])
        _ = try run(["issues", "mute", "-i", ids[1]])
        func status(_ id: String) throws -> String? { try server.getJSON("/api/0/issues/\(id)/")["status"]?.stringValue }
        XCTAssertEqual(try status(ids[0]), "resolved")
        XCTAssertEqual(try status(ids[1]), "ignored")
        XCTAssertEqual(try status(ids[2]), "unresolved")
        let table = try run(["issues", "list"]).stdout
        XCTAssertTrue(table.split(separator: "\n").contains { $0.contains("DEFAULT-\(ids[0])") && $0.contains("resolved") }, table)
        // Only the resolved ones come back; the ignored one stays ignored.
        _ = try run(["issues", "-s", "resolved", "unresolve"])
        XCTAssertEqual(try status(ids[0]), "unresolved")
        XCTAssertEqual(try status(ids[1]), "ignored")
        _ = try run(["issues", "-a", "resolve"])
        XCTAssertEqual(Set(try ids.map(status)), ["resolved"])
    }

    func testBulkUpdateOf500IssuesAndMalformedUpdatesAreRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        for n in 0..<500 {
            let e = TestEvents.native(offsets: [0x10, UInt64(0x1000 + n * 16)], functions: ["main", "f\(n)"])
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
        }
        try server.waitUntilIdle(timeout: 120)
        let ids = (try server.getJSON("/api/0/projects/faultline/default/issues/?limit=1000").arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        XCTAssertEqual(ids.count, 500)
        let query = ids.map { "id=\($0)" }.joined(separator: "&")
        let r = put(server, "/api/0/projects/faultline/default/issues/?\(query)", ["status": "resolved", "statusDetails": ["inNextRelease": true]])
        XCTAssertEqual(r.status, 200, r.text)
        let statuses = (try server.getJSON("/api/0/projects/faultline/default/issues/?limit=1000").arrayValue ?? []).compactMap { $0["status"]?.stringValue }
        XCTAssertEqual(Set(statuses), ["resolved"])
        XCTAssertEqual(statuses.count, 500)

        XCTAssertEqual(put(server, "/api/0/issues/\(ids[0])/", ["status": "closed"]).status, 400)
        XCTAssertEqual(put(server, "/api/0/issues/\(ids[0])/", ["status": "ignored", "statusDetails": ["ignoreCount": -1]]).status, 400)
        XCTAssertEqual(put(server, "/api/0/issues/\(ids[0])/", ["status": "ignored", "statusDetails": ["ignoreUntil": "tomorrow"]]).status, 400)
        XCTAssertEqual(put(server, "/api/0/issues/\(ids[0])/", ["status": "ignored", "statusDetails": ["ignoreDuration": 1e308]]).status, 400)
        XCTAssertEqual(put(server, "/api/0/issues/\(ids[0])/", ["status": "ignored", "statusDetails": ["ignoreUntil": "99999-01-01T00:00:00Z"]]).status, 400)
        XCTAssertEqual(put(server, "/api/0/issues/99999999/", ["status": "resolved"]).status, 404)
        XCTAssertEqual(put(server, "/api/0/projects/faultline/default/issues/?id=99999999", ["status": "resolved"]).status, 400)
        let unauthenticated = RawHTTP.send(port: server.port, method: "PUT", path: "/api/0/issues/\(ids[0])/", body: Data("{\"status\":\"resolved\"}".utf8))
        XCTAssertEqual(unauthenticated.status, 401)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(ids[0])/")["status"]?.stringValue, "resolved", "nothing changed by refused updates")
    }

    /// The API's `?query=` is the issues list's search: a bulk update with a release term changes
    /// that release's issues only (it changed every issue of the project), a term the server cannot
    /// apply is refused, and the list pages by cursor as sentry-cli follows it.
    func testTheIssuesAPISearchesAndPagesAndABulkUpdateChangesOnlyWhatItFinds() throws {
        let server = try TestServer()
        defer { server.stop() }
        for (n, function, release, level) in [(1, "alpha", "a@1", "fatal"), (2, "beta", "a@1", "warn"), (3, "gamma", "b@1", "fatal")] {
            var e = TestEvents.native(offsets: [0x10, UInt64(0x100 * n)], release: release, functions: ["main", function])
            e["level"] = .string(level)
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
        }
        try server.waitUntilIdle()
        let base = "/api/0/projects/faultline/default/issues/"
        func titles(_ query: String) throws -> [String] {
            (try server.getJSON(base + "?" + query).arrayValue ?? []).compactMap { $0["title"]?.stringValue }.sorted()
        }
        // An issue's level is its latest event's (it was always "error"), `warn` spelled as Sentry does.
        let levels = Dictionary(
            uniqueKeysWithValues: (try server.getJSON(base).arrayValue ?? []).map { ($0["title"]?.stringValue ?? "", $0["level"]?.stringValue ?? "") })
        XCTAssertEqual(levels, ["SIGSEGV in alpha": "fatal", "SIGSEGV in beta": "warning", "SIGSEGV in gamma": "fatal"])
        let one = try XCTUnwrap((try server.getJSON(base + "?query=beta").arrayValue ?? []).first?["id"]?.stringValue)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(one)/")["level"]?.stringValue, "warning")
        XCTAssertEqual(try titles("query=level:fatal"), ["SIGSEGV in alpha", "SIGSEGV in gamma"], "the level is searchable as a tag")
        XCTAssertEqual(try titles("query=release:a@1"), ["SIGSEGV in alpha", "SIGSEGV in beta"])
        XCTAssertEqual(try titles("query=gamma"), ["SIGSEGV in gamma"])
        XCTAssertEqual(try titles("query=%22in%20gamma%22"), ["SIGSEGV in gamma"], "a quoted phrase")

        let resolved = put(server, base + "?query=release:a@1", ["status": "resolved"])
        XCTAssertEqual(resolved.status, 200, resolved.text)
        XCTAssertEqual(try titles("query=is:resolved"), ["SIGSEGV in alpha", "SIGSEGV in beta"])
        XCTAssertEqual(try titles("query=is:unresolved"), ["SIGSEGV in gamma"], "b@1's issue is untouched")

        let refused = put(server, base + "?query=is:assigned", ["status": "ignored"])
        XCTAssertEqual(refused.status, 400, refused.text)
        XCTAssertTrue(refused.text.contains("is:assigned"), refused.text)
        XCTAssertEqual(server.get(base + "?query=is:for_review").status, 400)
        // Sentry's terms this server does not apply are refused, never read as tags or words
        // (`!level:fatal` found nothing; a lone quote found everything).
        for term in ["!level:fatal", "has:user", "assigned:me", "firstSeen:-24h", "times_seen:%3E10", "%22"] {
            let r = server.get(base + "?query=" + term)
            XCTAssertEqual(r.status, 400, "\(term): \(r.text)")
        }
        XCTAssertEqual(try titles("environment=staging"), [], "Sentry's environment parameter filters")
        XCTAssertEqual(try titles("environment=production").count, 3)
        XCTAssertEqual(server.get(base + "?sort=priority").status, 400)
        XCTAssertEqual(try titles("query=is:ignored"), [], "nothing changed by the refused update")

        // One issue per page, newest first: every issue once, then a last page that says so.
        var seen: [String] = []
        var path = base + "?limit=1&sort=new"
        for _ in 0..<5 {
            let r = server.get(path)
            XCTAssertEqual(r.status, 200, r.text)
            seen += (try JSONValue.parse(r.body).arrayValue ?? []).compactMap { $0["title"]?.stringValue }
            let link = try XCTUnwrap(r.headers["link"], "\(r.headers)")
            guard link.contains("results=\"true\""), let start = link.firstIndex(of: "<"), let end = link.firstIndex(of: ">") else { break }
            // A whole URL on this server, as Sentry writes it: its path and query are the next page.
            let url = try XCTUnwrap(URLComponents(string: String(link[link.index(after: start)..<end])), link)
            XCTAssertEqual(url.port, Int(server.port), link)
            path = url.percentEncodedPath + "?" + (url.percentEncodedQuery ?? "")
        }
        XCTAssertEqual(seen, ["SIGSEGV in gamma", "SIGSEGV in beta", "SIGSEGV in alpha"])
        XCTAssertEqual(server.get(base + "?cursor=zz").status, 400)
    }

    func testAssignAndCommentThroughTheAPIAndThePage() throws {
        let server = try TestServer()
        defer { server.stop() }
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20], functions: ["main", "sync"]))).status, 200)
        try server.waitUntilIdle()
        let id = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue?.first?["id"]?.stringValue)
        let assigned = put(server, "/api/0/issues/\(id)/", ["assignedTo": "user:alice"])
        XCTAssertEqual(assigned.status, 200, assigned.text)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["assignedTo"]?["name"]?.stringValue, "alice")
        XCTAssertEqual(put(server, "/api/0/issues/\(id)/", ["assignedTo": .string("bob\u{1b}[2J")]).status, 400, "control characters refused")
        let posted = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/issues/\(id)/comments/",
            headers: ["Authorization": "Bearer \(server.token)"], body: Data(#"{"text": "seen on the EU nodes only <b>"}"#.utf8))
        XCTAssertEqual(posted.status, 201, posted.text)
        let comments = try server.getJSON("/api/0/issues/\(id)/comments/").arrayValue ?? []
        XCTAssertEqual(comments.map { $0["text"]?.stringValue }, ["seen on the EU nodes only <b>"])

        let login = try XCTUnwrap(server.webLogin())
        XCTAssertEqual(server.postForm("/ui/issues/\(id)/comment", login, ["_csrf": login.csrf, "text": "rolled back 1.4.2"]).status, 303)
        XCTAssertEqual(server.postForm("/ui/issues/\(id)/assign", login, ["_csrf": login.csrf, "assignee": "carol"]).status, 303)
        let page = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(page.contains("seen on the EU nodes only &lt;b&gt;") && page.contains("rolled back 1.4.2"), page)
        XCTAssertTrue(page.contains("value=\"carol\""), page)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["numComments"]?.int64Value, 2)
        XCTAssertEqual(put(server, "/api/0/issues/\(id)/", ["assignedTo": .null]).status, 200)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["assignedTo"], .null)
    }
}
