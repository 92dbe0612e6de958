// The web pages in a real browser (headless Chromium over the DevTools protocol): log in, read
// a symbolicated issue, see a debug file's backfill, save screenshots that must not be blank;
// and hostile event text that must not run as script.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class WebBrowserTests: XCTestCase {
    /// Screenshots land here (and the README's copy is taken from a run).
    static let screenshotDirectory = ProcessInfo.processInfo.environment["FAULTLINE_SCREENSHOT_DIR"] ?? NSTemporaryDirectory() + "faultline-web-screenshots"

    func assertNotBlank(_ shot: JSONValue?, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(shot?["width"]?.int64Value, 1280, "\(name) width", file: file, line: line)
        XCTAssertGreaterThan(shot?["height"]?.int64Value ?? 0, 400, name, file: file, line: line)
        XCTAssertGreaterThan(shot?["colors"]?.int64Value ?? 0, 8, "\(name) looks blank (single colour)", file: file, line: line)
    }

    func testLogInReadASymbolicatedIssueAndSeeTheBackfillOfAnUploadedDebugFile() throws {
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-web-e2e")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let program = try Fixtures.buildProgram(in: dir)
        server.ingest(Fixtures.crashEvent(program, release: "fixture@1"))
        try server.waitUntilIdle()
        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        try server.waitUntilIdle()
        try FileManager.default.createDirectory(atPath: Self.screenshotDirectory, withIntermediateDirectories: true)

        let base = "http://127.0.0.1:\(server.port)"
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        var steps = Browser.loginSteps(server)
        steps += [
            ["op": "eval", "save": "afterLogin", "expr": "location.pathname"],
            ["op": "goto", "url": .string(base + "/ui/projects/default/issues")],
            ["op": "eval", "save": "list", "expr": "[...document.querySelectorAll('tr.issue .title a')].map(a => a.textContent)"],
            ["op": "eval", "save": "sparks", "expr": "document.querySelectorAll('tr.issue svg.spark rect').length"],
            ["op": "screenshot", "path": .string(Self.screenshotDirectory + "/issues.png"), "save": "issuesShot"],
            // Follow the link as a user would (click), not by building the URL.
            ["op": "submit", "selector": "tr.issue .title a"],
            ["op": "eval", "save": "issuePath", "expr": "location.pathname"],
            ["op": "eval", "save": "frames", "expr": "[...document.querySelectorAll('.stack .frame .fn')].map(e => e.textContent)"],
            ["op": "eval", "save": "inAppStyled", "expr": "getComputedStyle(document.querySelector('.frame.inapp .fn')).fontWeight"],
            ["op": "eval", "save": "stylesheetLoaded", "expr": "document.styleSheets.length > 0 && document.styleSheets[0].cssRules.length > 10"],
            ["op": "screenshot", "path": .string(Self.screenshotDirectory + "/issue.png"), "save": "issueShot"],
            ["op": "goto", "url": .string(base + "/ui/debug-files")],
            ["op": "eval", "save": "backfill", "expr": "[...document.querySelectorAll('tr.debug-file')].map(r => r.textContent)"],
            ["op": "eval", "save": "backfillState", "expr": "document.querySelector('td.backfill [data-state]')?.dataset.state"],
            ["op": "screenshot", "path": .string(Self.screenshotDirectory + "/debug-files.png"), "save": "debugShot"]
        ]
        let r = try Browser.run(steps)
        XCTAssertEqual(r.values["afterLogin"]?.stringValue, "/ui/projects")
        let titles = (r.values["list"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertTrue(titles.contains { $0.contains("faultline_fixture_leaf") }, "issues list: \(titles)")
        XCTAssertGreaterThan(r.values["sparks"]?.int64Value ?? 0, 0)
        XCTAssertEqual(r.values["issuePath"]?.stringValue, "/ui/issues/\(id)")
        let frames = (r.values["frames"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(frames.first, "faultline_fixture_leaf", "frames: \(frames)")
        XCTAssertTrue(frames.contains("faultline_fixture_middle") && frames.contains("main"), "frames: \(frames)")
        XCTAssertEqual(r.values["inAppStyled"]?.stringValue, "700")
        XCTAssertEqual(r.values["stylesheetLoaded"]?.boolValue, true)
        let rows = (r.values["backfill"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertTrue(
            rows.contains {
                $0.contains(program.buildID.hex) && $0.contains("backfill done") && $0.contains("1 of 1 occurrences symbolicated") && $0.contains("by default")
            }, "\(rows)")
        XCTAssertEqual(r.values["backfillState"]?.stringValue, "done")
        assertNotBlank(r.values["issuesShot"], "issues list")
        assertNotBlank(r.values["issueShot"], "issue page")
        assertNotBlank(r.values["debugShot"], "debug files")
    }

    func testHostileEventFieldsDoNotRunInTheBrowser() throws {
        let server = try TestServer()
        defer { server.stop() }
        // The canary a payload that runs would call: this test's own server, listening (on a port the
        // kernel chose) from before the payloads are stored until after the browser is gone, so no
        // other process can be the one that answers or takes a hit.
        let canary = try ScriptedHTTPServer { _ in .status(204, body: "") }
        defer { canary.stop() }
        let hit = "http://127.0.0.1:\(canary.port)"
        var e = TestEvents.native(offsets: [0x10, 0x20], functions: ["main", "<img src=x onerror=\"fetch('\(hit)/fn');document.title='pwned'\">"])
        var values = e["exception"]!["values"]!.arrayValue!
        values[0]["type"] = .string("<script>fetch('\(hit)/type');document.title='pwned'</script>")
        values[0]["value"] = .string("\"><svg onload=\"fetch('\(hit)/value')\">")
        e["exception"] = ["values": .array(values)]
        e["request"] = ["url": .string("javascript:fetch('\(hit)/url');document.title='pwned'")]
        e["tags"] = .object(["x\" onmouseover=\"fetch('\(hit)/tagkey')": .string("' autofocus onfocus='fetch(`\(hit)/tag`)")])
        e["breadcrumbs"] = [
            "values": [
                ["message": .string("</li><script>fetch('\(hit)/crumb')</script>"), "category": .string("<iframe src=\"javascript:fetch('\(hit)/iframe')\">")]
            ]
        ]
        e["environment"] = .string("<style>body{background:url(\(hit)/css)}</style>")
        e["release"] = .string("<meta http-equiv=refresh content=\"0;url=\(hit)/meta\">")
        server.ingest(e, items: [WebItems.log([("error", "<script>fetch('\(hit)/log')</script>", "r")], trace: "t", at: Date().timeIntervalSince1970)])
        try server.waitUntilIdle()
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        let base = "http://127.0.0.1:\(server.port)"
        var steps = Browser.loginSteps(server)
        for path in ["/ui/projects/default/issues", "/ui/projects/default/issues?release=x", "/ui/projects/default/logs", "/ui/issues/\(id)"] {
            steps.append(["op": "goto", "url": .string(base + path)])
            steps.append(["op": "sleep", "seconds": 0.3])
        }
        steps += [
            // Click every link and hover/focus everything a payload could hook, then look.
            ["op": "eval", "save": "jsLinks", "expr": "[...document.querySelectorAll('a')].filter(a => !/^https?:/.test(a.href)).map(a => a.href)"],
            [
                "op": "eval", "save": "handlers",
                "expr":
                    "[...document.querySelectorAll('*')].flatMap(el => [...el.attributes].filter(a => a.name.startsWith('on')).map(a => el.tagName + ' ' + a.name))"
            ],
            ["op": "eval", "save": "scripts", "expr": "document.scripts.length"],
            ["op": "eval", "save": "shown", "expr": .string("document.body.innerText.includes(\"<script>fetch('\(hit)/type')\")")],
            [
                "op": "eval", "save": "focus",
                "expr":
                    "[...document.querySelectorAll('dd, dt, li, span')].forEach(e => { e.focus?.(); e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})) }); true"
            ],
            ["op": "sleep", "seconds": 0.5],
            ["op": "eval", "save": "title", "expr": "document.title"]
        ]
        let r = try Browser.run(steps)
        XCTAssertEqual(canary.requests.map(\.path), [], "a payload ran and called the canary")
        XCTAssertEqual(canary.connectionCount, 0, "the page connected to the canary")
        XCTAssertEqual(r.requests.filter { $0.contains(":\(canary.port)") }, [], "the page requested a payload URL")
        XCTAssertEqual(r.dialogs, [])
        XCTAssertNotEqual(r.values["title"]?.stringValue, "pwned")
        XCTAssertTrue(r.values["title"]?.stringValue?.hasSuffix("· Faultline") == true, "\(String(describing: r.values["title"]))")
        XCTAssertEqual(r.values["scripts"]?.int64Value, 0)
        XCTAssertEqual(r.values["handlers"]?.arrayValue ?? [], [])
        XCTAssertEqual((r.values["jsLinks"]?.arrayValue ?? []).filter { $0.stringValue?.hasPrefix("javascript") == true }, [])
        XCTAssertEqual(r.values["shown"]?.boolValue, true, "the hostile text is shown as text")
    }

    /// The browser test's own canary must be able to fail: a page that did run the payload is noticed.
    func testTheCanaryNoticesAScriptThatRuns() throws {
        // A page with no CSP and a live payload, served by the same kind of canary.
        let canary = try ScriptedHTTPServer { request in
            request.path == "/unsafe-page"
                ? .status(200, headers: ["Content-Type": "text/html"], body: "<title>t</title><script>document.title='pwned';fetch('/ran')</script>")
                : .status(204, body: "")
        }
        defer { canary.stop() }
        let r = try Browser.run([
            ["op": "goto", "url": .string("http://127.0.0.1:\(canary.port)/unsafe-page")], ["op": "sleep", "seconds": 0.5],
            ["op": "eval", "save": "title", "expr": "document.title"]
        ])
        let hits = canary.requests.map(\.path)
        XCTAssertTrue(hits.contains("/ran"), "the canary saw \(hits): the XSS test could not fail")
        XCTAssertEqual(r.values["title"]?.stringValue, "pwned")
    }
}
