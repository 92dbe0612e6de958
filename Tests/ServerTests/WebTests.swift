// The web pages rendered by the real server from a store seeded through real ingest: login and
// cookies, CSRF, security headers, every page's content, filters, keyset pages, escaping.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class WebTests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws { server = try TestServer() }
    override func tearDown() { server?.stop() }

    func richEvent(type: String = "SIGSEGV", release: String = "app@2.0", environment: String = "staging", trace: String = "trace-1") -> JSONValue {
        var e = TestEvents.native(
            offsets: [0x1000, 0x2000, 0x3000], release: release, installID: "install-\(UUID().uuidString.prefix(6))",
            functions: ["main", "app_middle", "app_leaf"])
        e["environment"] = .string(environment)
        e["breadcrumbs"] = [
            "values": [["timestamp": .double(Date().timeIntervalSince1970), "level": "info", "category": "ui", "message": "opened the settings screen"]]
        ]
        e["tags"] = ["build_flavor": "nightly"]
        e["contexts"] = ["os": ["name": "Linux", "version": "6.1"], "trace": ["trace_id": .string(trace)]]
        e["request"] = ["url": "https://example.com/settings?x=1"]
        var values = e["exception"]!["values"]!.arrayValue!
        values[0]["type"] = .string(type)
        values[0]["stacktrace"]?["registers"] = ["rip": "0x55550000103a", "rsp": "0x7ffd00001000"]
        values[0]["mechanism"] = ["type": "signalhandler", "handled": false, "meta": ["signal": ["number": 11, "name": "SIGSEGV", "code_name": "SEGV_MAPERR"]]]
        e["exception"] = ["values": .array(values)]
        return e
    }

    /// Grouping records each occurrence's environment; occurrences grouped before (by a binary
    /// that did not) are indexed by the catch-up pass after a start.
    func testEnvironmentsOfOccurrencesGroupedBeforeStartAreIndexed() throws {
        let event = richEvent(environment: "older-binary")
        let symbolicator = server.server.symbolicator
        let (dir, bootstrap) = (server.dataDirectory, server.bootstrap)
        server.stop(removeData: false)
        let store = try TestDatabase.openStore(dataDirectory: dir)
        let now = Date().timeIntervalSince1970
        let id = try XCTUnwrap(
            try store.storeIngest(
                event: IncomingEvent(
                    projectID: bootstrap.project.id, eventID: event["event_id"]!.stringValue!,
                    received: now, timestamp: now, release: nil, installID: nil,
                    compressedEvent: Deflate.compress(event.serialized())), items: []))
        let stack = StackExtractor.signature(of: event, grouping: .newProjects)
        let (data, key) = stack.encodedWithKey
        try store.recordGrouping([
            GroupingOutcome(
                occurrenceID: id, projectID: bootstrap.project.id, stack: stack, stackEncoded: data, stackKey: key,
                fingerprint: Fingerprinter.fingerprint(stack, symbolicator: symbolicator),
                timestamp: now, release: nil, environment: nil)
        ])
        store.close()
        server = try TestServer(dataDirectory: dir, restarting: bootstrap)
        let login = try XCTUnwrap(server.webLogin())
        var page = ""
        for _ in 0..<50 {
            page = server.page("/ui/projects/default/issues?environment=older-binary", login).text
            if page.contains("SIGSEGV in") { break }
            usleep(100_000)
        }
        XCTAssertTrue(page.contains("SIGSEGV in app_leaf"), page)
        // A new occurrence is recorded with its environment by grouping itself.
        server.ingest(richEvent(type: "SIGABRT", environment: "grouped-now"))
        try server.waitUntilIdle()
        XCTAssertTrue(server.page("/ui/projects/default/issues?environment=grouped-now", login).text.contains("SIGABRT in app_leaf"))
    }

    func testPagesNeedALoginAndTheCookieIsHttpOnlyStrict() throws {
        let anon = RawHTTP.send(port: server.port, method: "GET", path: "/ui/projects")
        XCTAssertEqual(anon.status, 303)
        XCTAssertEqual(anon.headers["location"], "/ui/login?next=%2Fui%2Fprojects", "the login goes back to the page asked for (LoginReturnTests)")
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/").headers["location"], "/ui/")

        let form = RawHTTP.send(port: server.port, method: "GET", path: "/ui/login")
        let nonce = String(form.headers["set-cookie"]!.split(separator: ";")[0].split(separator: "=")[1])
        let wrong = RawHTTP.send(
            port: server.port, method: "POST", path: "/ui/login", headers: ["Cookie": "fl_login=\(nonce)"],
            body: Data("_login=\(nonce)&token=flst_000000000000000000000000000000000000000000000000".utf8))
        XCTAssertEqual(wrong.status, 401)
        XCTAssertNil(wrong.headers["set-cookie"].flatMap { $0.hasPrefix("fl_session=") ? $0 : nil })
        // Without the nonce cookie (a cross-site login form), the right token is refused too.
        let noNonce = RawHTTP.send(port: server.port, method: "POST", path: "/ui/login", body: Data("_login=\(nonce)&token=\(server.token)".utf8))
        XCTAssertEqual(noNonce.status, 403)

        let ok = RawHTTP.send(
            port: server.port, method: "POST", path: "/ui/login", headers: ["Cookie": "fl_login=\(nonce)"],
            body: Data("_login=\(nonce)&token=\(server.token)".utf8))
        XCTAssertEqual(ok.status, 303)
        let cookie = try XCTUnwrap(ok.headers["set-cookie"])
        XCTAssertTrue(cookie.hasPrefix("fl_session="), cookie)
        XCTAssertTrue(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), cookie)
        XCTAssertFalse(cookie.contains("Secure"), "plain http must not set Secure: \(cookie)")
        let behindTLS = RawHTTP.send(port: server.port, method: "GET", path: "/ui/login", headers: ["X-Forwarded-Proto": "https"])
        XCTAssertTrue(behindTLS.headers["set-cookie"]?.contains("Secure") == true)

        let session = String(cookie.split(separator: ";")[0])
        let page = RawHTTP.send(port: server.port, method: "GET", path: "/ui/projects", headers: ["Cookie": session])
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("Default"))

        // Logout needs the CSRF token, then the session is gone.
        let login = try XCTUnwrap(server.webLogin())
        XCTAssertEqual(server.postForm("/ui/logout", login, [:]).status, 403)
        XCTAssertEqual(server.postForm("/ui/logout", login, ["_csrf": login.csrf]).status, 303)
        XCTAssertEqual(server.page("/ui/projects", login).status, 303)
    }

    func testAWebUserLogsInWithAPassword() throws {
        let stores = server.server.stores
        XCTAssertThrowsError(try WebUsers.set(stores: stores, name: "alice", password: "short"))
        try WebUsers.set(stores: stores, name: "alice", password: "correct horse battery")
        XCTAssertEqual(try WebUsers.list(stores: stores), ["alice"])
        func attempt(_ password: String) -> RawHTTP.Response {
            let form = RawHTTP.send(port: server.port, method: "GET", path: "/ui/login")
            let nonce = String(form.headers["set-cookie"]!.split(separator: ";")[0].split(separator: "=")[1])
            return RawHTTP.send(
                port: server.port, method: "POST", path: "/ui/login", headers: ["Cookie": "fl_login=\(nonce)"],
                body: Data("_login=\(nonce)&user=alice&password=\(password.replacingOccurrences(of: " ", with: "+"))".utf8))
        }
        XCTAssertEqual(attempt("correct horse battery!").status, 401)
        let ok = attempt("correct horse battery")
        XCTAssertEqual(ok.status, 303)
        let session = try XCTUnwrap(ok.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        XCTAssertTrue(RawHTTP.send(port: server.port, method: "GET", path: "/ui/projects", headers: ["Cookie": session]).text.contains(">alice<"))
    }

    func testEveryPageCarriesAStrictContentSecurityPolicy() throws {
        let login = try XCTUnwrap(server.webLogin())
        for path in [
            "/ui/login", "/ui/projects", "/ui/projects/default/issues", "/ui/debug-files", "/ui/projects/default/health", "/ui/projects/default/logs",
            "/ui/issues/999", "/ui/projects/default/traces", "/ui/projects/default/traces/\(String(repeating: "ab", count: 16))"
        ] {
            let r = server.page(path, login)
            let csp = r.headers["content-security-policy"] ?? ""
            XCTAssertTrue(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'") && csp.contains("style-src 'self'"), "\(path): \(csp)")
            XCTAssertFalse(csp.contains("unsafe-inline"), path)
            XCTAssertEqual(r.headers["x-content-type-options"], "nosniff", path)
            XCTAssertFalse(r.text.contains("<script"), "\(path) carries script")
            XCTAssertNil(r.text.range(of: " on[a-z]+=", options: .regularExpression), "\(path) has an inline event handler")
            XCTAssertNil(r.text.range(of: " style=", options: .regularExpression), "\(path) has inline style")
        }
        let css = server.page("/ui/static/app.css", login)
        XCTAssertEqual(css.status, 200)
        XCTAssertTrue(css.headers["content-type"]?.hasPrefix("text/css") == true)
    }

    func testIssuesListIssuePageHealthAndLogsRenderFromTheStore() throws {
        let t = Date().timeIntervalSince1970
        server.ingest(
            richEvent(),
            items: [
                WebItems.log([("error", "database connection lost", "app@2.0"), ("info", "user opened settings", "app@2.0")], trace: "trace-1", at: t),
                WebItems.session(release: "app@2.0", environment: "staging", crashed: true),
                WebItems.session(release: "app@2.0", environment: "staging", crashed: false)
            ])
        server.ingest(
            richEvent(type: "SIGABRT", release: "app@1.0", environment: "production", trace: "trace-2"),
            items: [WebItems.log([("warn", "other session line", "app@1.0")], trace: "trace-2", at: t)])
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())

        let list = server.page("/ui/projects/default/issues", login)
        XCTAssertEqual(list.status, 200)
        XCTAssertTrue(list.text.contains("SIGSEGV in app_leaf"), list.text)
        XCTAssertTrue(list.text.contains("SIGABRT in app_leaf"))
        XCTAssertTrue(list.text.contains("<svg class=\"spark\""))
        XCTAssertTrue(list.text.contains("not symbolicated"))
        // Filters: release, text, environment (indexed in the background), status.
        let byRelease = server.page("/ui/projects/default/issues?release=app%401.0", login).text
        XCTAssertTrue(byRelease.contains("SIGABRT") && !byRelease.contains("SIGSEGV in"), byRelease)
        let byText = server.page("/ui/projects/default/issues?q=sigsegv", login).text
        XCTAssertTrue(byText.contains("SIGSEGV in") && !byText.contains("SIGABRT in"))
        var byEnv = ""
        for _ in 0..<50 {
            byEnv = server.page("/ui/projects/default/issues?environment=staging", login).text
            if byEnv.contains("SIGSEGV in") { break }
            usleep(100_000)
        }
        XCTAssertTrue(byEnv.contains("SIGSEGV in") && !byEnv.contains("SIGABRT in"), byEnv)

        let id = try XCTUnwrap(list.text.range(of: "href=\"/ui/issues/").map { String(list.text[$0.upperBound...].prefix(while: \.isNumber)) })
        let issue = server.page("/ui/issues/\(id)", login).text
        for expected in [
            "app_leaf", "app_middle", "SEGV_MAPERR", "opened the settings screen", "rip", "0x55550000103a", "build_flavor", "nightly",
            "0123456789abcdef0123456789abcdef01234567", "missing", "Resolve", "Merge", "Occurrences", "os.name",
            "href=\"https://example.com/settings?x=1\"", "logs of this session"
        ] {
            XCTAssertTrue(issue.contains(expected), "issue page lacks \(expected)")
        }
        // Innermost first: the leaf comes before main in the stack.
        let leaf = try XCTUnwrap(issue.range(of: ">app_leaf<")), main = try XCTUnwrap(issue.range(of: ">main<"))
        XCTAssertLessThan(leaf.lowerBound, main.lowerBound)

        let health = server.page("/ui/projects/default/health", login).text
        XCTAssertTrue(health.contains("50.00 %"), health)
        XCTAssertTrue(health.contains("<svg class=\"rates\""))

        let logs = server.page("/ui/projects/default/logs", login).text
        XCTAssertTrue(logs.contains("database connection lost") && logs.contains("other session line"))
        let errors = server.page("/ui/projects/default/logs?level=error", login).text
        XCTAssertTrue(errors.contains("database connection lost") && !errors.contains("user opened settings"))
        // The page offers the level the SDK sends (`warning`); a client's `warn` is the same level.
        let warnings = server.page("/ui/projects/default/logs?level=warning", login).text
        XCTAssertTrue(warnings.contains("<option value=\"warning\" selected>") && !warnings.contains("<option value=\"warn\""), warnings)
        XCTAssertTrue(warnings.contains("other session line") && !warnings.contains("database connection lost"))
        XCTAssertTrue(server.page("/ui/projects/default/logs?level=warn", login).text.contains("other session line"))
        let session = server.page("/ui/projects/default/logs?trace=trace-1&around=\(Int64(t))", login).text
        XCTAssertTrue(session.contains("user opened settings") && !session.contains("other session line"))
        XCTAssertFalse(server.page("/ui/projects/default/logs?trace=trace-1&around=\(Int64(t) - 3600)", login).text.contains("user opened settings"))
    }

    /// A client's timestamp is any JSON number: -1e300 and 1e308 once reached `Int(days)` and
    /// `Int64(timestamp)` in the pages and trapped the server. Out of range → the time received.
    func testHostileTimestampsAndTimesInQueriesNeitherTrapNorStick() throws {
        let before = Date().timeIntervalSince1970
        // Beside the absurd: a clock 400 days fast and a report from 2019 (Relay's limits: a
        // minute ahead, thirty days behind), which kept their issue first in "last seen" order.
        let plausibleButWrong: [JSONValue] = [.double(before + 400 * 86_400), "2019-03-01T12:00:00Z"]
        for (i, ts) in ([JSONValue.double(-1e300), .double(1e308), .int(-1)] + plausibleButWrong).enumerated() {
            var e = richEvent(type: "SIGBUS\(i)", trace: "trace-hostile-\(i)")
            e["timestamp"] = ts
            server.ingest(e)
        }
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let list = server.page("/ui/projects/default/issues", login)
        XCTAssertEqual(list.status, 200)
        XCTAssertTrue((0..<5).allSatisfy { list.text.contains("SIGBUS\($0)") }, list.text)
        let after = Date().timeIntervalSince1970
        for issue in try XCTUnwrap(server.get("/api/0/projects/faultline/\(server.projectID)/issues/").json?.arrayValue) {
            for field in ["first_seen", "last_seen"] {
                let seen = try XCTUnwrap(issue[field]?.doubleValue, "\(issue)")
                XCTAssertGreaterThanOrEqual(seen, before - 5, "an out-of-range timestamp is replaced by the time received: \(issue)")
                XCTAssertLessThanOrEqual(seen, after + 5, "\(issue)")
            }
        }
        var ids: [String] = []
        var rest = Substring(list.text)
        while let r = rest.range(of: "href=\"/ui/issues/") {
            ids.append(String(rest[r.upperBound...].prefix(while: \.isNumber))); rest = rest[r.upperBound...]
        }
        XCTAssertEqual(ids.count, 5)
        for id in ids { XCTAssertEqual(server.page("/ui/issues/\(id)", login).status, 200) }
        for around in ["1e300", "-1e300", "inf", "nan", "99999999999999999999"] {
            XCTAssertEqual(server.page("/ui/projects/default/logs?around=\(around)", login).status, 200, around)
        }
    }

    func testResolveAndMergeNeedTheCSRFToken() throws {
        server.ingest(richEvent(type: "A"))
        server.ingest(richEvent(type: "B"))
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let issues = try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 10, offset: 0)
        XCTAssertEqual(issues.count, 2)
        let a = issues[0].id, b = issues[1].id

        XCTAssertEqual(server.postForm("/ui/issues/\(a)/resolve", login, [:]).status, 403)
        XCTAssertEqual(
            server.postForm("/ui/issues/\(a)/resolve", login, ["_csrf": (login.csrf.hasPrefix("0") ? "1" : "0") + login.csrf.dropFirst()]).status, 403)
        XCTAssertEqual(server.postForm("/ui/issues/\(a)/resolve", nil, ["_csrf": login.csrf]).status, 403)
        XCTAssertTrue(server.page("/ui/issues/\(a)", login).text.contains(">Resolve<"))
        XCTAssertEqual(server.postForm("/ui/issues/\(a)/resolve", login, ["_csrf": login.csrf]).status, 303)
        XCTAssertTrue(server.page("/ui/issues/\(a)", login).text.contains(">Reopen<"))
        XCTAssertFalse(server.page("/ui/projects/default/issues", login).text.contains("/ui/issues/\(a)\""))
        XCTAssertTrue(server.page("/ui/projects/default/issues?status=resolved", login).text.contains("/ui/issues/\(a)\""))
        // Ignored issues have a view of their own (it used to show the unresolved ones).
        XCTAssertEqual(server.postForm("/ui/issues/\(b)/ignore", login, ["_csrf": login.csrf]).status, 303)
        let ignoredView = server.page("/ui/projects/default/issues?status=ignored", login).text
        XCTAssertTrue(ignoredView.contains("/ui/issues/\(b)\"") && !ignoredView.contains("/ui/issues/\(a)\""), ignoredView)
        XCTAssertTrue(ignoredView.contains("<span class=\"tag ignored\">ignored</span>"))
        XCTAssertFalse(server.page("/ui/projects/default/issues", login).text.contains("/ui/issues/\(b)\""))

        XCTAssertEqual(server.postForm("/ui/issues/\(a)/merge", login, ["into": String(b)]).status, 403)
        let merged = server.postForm("/ui/issues/\(a)/merge", login, ["_csrf": login.csrf, "into": String(b)])
        XCTAssertEqual(merged.status, 303)
        XCTAssertEqual(try server.server.store.issue(id: a)?.id, b)
        XCTAssertEqual(try server.server.store.issue(id: b)?.count, 2)
        XCTAssertEqual(server.page("/ui/issues/\(a)", login).headers["location"], "/ui/issues/\(b)")
    }

    func testIssuesListPagesByKeysetWithoutOverlap() throws {
        for i in 0..<57 { server.ingest(richEvent(type: "T\(i)")) }
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let first = server.page("/ui/projects/default/issues?sort=count", login).text
        func ids(_ html: String) -> [String] {
            html.components(separatedBy: "<td class=\"title\"><a href=\"/ui/issues/").dropFirst().map {
                String($0.prefix(while: \.isNumber))
            }
        }
        XCTAssertEqual(ids(first).count, 50)
        let next = try XCTUnwrap(first.range(of: "rel=\"next\" href=\"").map { String(first[$0.upperBound...].prefix(while: { $0 != "\"" })) })
        let second = server.page(next.replacingOccurrences(of: "&amp;", with: "&"), login).text
        XCTAssertEqual(ids(second).count, 7)
        XCTAssertEqual(Set(ids(first) + ids(second)).count, 57)
    }

    func testEventTextIsEscapedEverywhere() throws {
        var e = richEvent(type: "<script>document.title='x'</script>")
        e["tags"] = ["k\"><b>": "\"><img src=x onerror=alert(1)>"]
        e["request"] = ["url": "javascript:alert(1)"]
        e["breadcrumbs"] = ["values": [["message": "</li><script>alert(2)</script>", "level": "<i>"]]]
        server.ingest(e, items: [WebItems.log([("error", "<script>alert(3)</script>", "<b>rel</b>")], trace: "t", at: Date().timeIntervalSince1970)])
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        for path in ["/ui/projects/default/issues", "/ui/issues/\(id)", "/ui/projects/default/logs"] {
            let html = server.page(path, login).text
            XCTAssertFalse(html.contains("<script"), "\(path) lets a script tag through")
            XCTAssertFalse(html.contains("<img"), path)
            XCTAssertFalse(html.contains("href=\"javascript"), path)
            XCTAssertFalse(html.contains("<b>"), path)
        }
        let issue = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(issue.contains("&lt;script&gt;document.title=&#39;x&#39;&lt;/script&gt;"))
        XCTAssertTrue(issue.contains("javascript:alert(1)"), "a refused URL is still shown as text")
    }

    func testEscapingAndURLFilterUnits() {
        XCTAssertEqual(WebEscaping.esc("<a href=\"x\" title='y'>&</a>"), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
        for bad in ["javascript:alert(1)", " JaVaScRiPt:alert(1)", "data:text/html,<script>", "//evil.example/x", "java\nscript:x", "vbscript:x", "http://"] {
            XCTAssertNil(WebEscaping.safeURL(bad), bad)
        }
        XCTAssertEqual(WebEscaping.safeURL("https://example.com/a?b=1&c=2"), "https://example.com/a?b=1&amp;c=2")
    }
}
