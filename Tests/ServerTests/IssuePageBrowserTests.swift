// The issue page in headless Chromium with real crashes (issue 33): the crasher built with the
// tests crashes two ways (eight parked threads and a SIGSEGV; a Swift force unwrap), its debug
// file and sources are uploaded with `faultline upload --include-sources`, and the page must show
// every thread (the one that could not be unwound with its reason), the source lines around a
// frame from the uploaded sources, short names with the full ones behind <details>, Faultline's
// own frames dimmed, and two issues under two different titles.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssuePageBrowserTests: XCTestCase {
    func testRealCrashesReadWithEveryThreadTheirSourceLinesAndShortNames() throws {
        let crasher = TestSupport.product("faultline-crasher")
        let server = try TestServer()
        defer { server.stop() }
        let upload = try TestSupport.run(
            TestSupport.product("faultline"), ["upload", "--include-sources", "--json", crasher],
            environment: ["FAULTLINE_URL": "http://127.0.0.1:\(server.port)", "FAULTLINE_TOKEN": server.token], timeout: 300)
        XCTAssertEqual(upload.exitCode, 0, upload.description)
        let uploaded = try JSONValue.parse(Data(upload.stdout.utf8))
        XCTAssertGreaterThanOrEqual(uploaded["files"]?[0]?["sources"]?["sent"]?.int64Value ?? 0, 1, "the crasher's sources went up: \(upload.stdout)")

        let app = TestSupport.makeTemporaryDirectory("issue-page-browser")
        defer { try? FileManager.default.removeItem(atPath: app) }
        let env = ["SWIFT_BACKTRACE": "enable=no"]
        let parked = try TestSupport.run(
            crasher, ["parked-threads-segv", "--threads", "8", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 60)
        XCTAssertEqual(parked.signal, SIGSEGV, parked.description)
        let unwrap = try TestSupport.run(crasher, ["swift-force-unwrap", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 60)
        XCTAssertNotEqual(unwrap.signal, 0, unwrap.description)
        let flush = try TestSupport.run(crasher, ["flush", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
        XCTAssertEqual(flush.exitCode, 0, flush.description)
        try server.waitUntilIdle()
        let issues = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue)
        let titles = issues.compactMap { $0["title"]?.stringValue }
        XCTAssertEqual(titles.count, 2, "\(titles)")
        XCTAssertEqual(Set(titles).count, titles.count, "two issues, two titles: \(titles)")
        let threadsIssue = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.hasPrefix("SIGSEGV") == true }?["id"]?.stringValue, "\(titles)")
        let unwrapIssue = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.contains("forceUnwrapNil") == true }?["id"]?.stringValue, "\(titles)")

        let base = "http://127.0.0.1:\(server.port)"
        // tools/screenshots copies these into docs/ for the README.
        let shots = WebBrowserTests.screenshotDirectory
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        var steps = Browser.loginSteps(server)
        steps += [
            ["op": "eval", "save": "nav", "expr": "[...document.querySelectorAll('header nav a')].map(a => a.textContent)"],
            ["op": "goto", "url": .string(base + "/ui/projects/default/issues")],
            ["op": "eval", "save": "listTitles", "expr": "[...document.querySelectorAll('tr.issue .title a')].map(a => a.textContent)"],
            ["op": "screenshot", "path": .string(shots + "/issues-real.png"), "save": "listShot"],
            ["op": "goto", "url": .string(base + "/ui/issues/\(threadsIssue)")],
            ["op": "eval", "save": "threads", "expr": "[...document.querySelectorAll('details.thread > summary')].map(s => s.textContent)"],
            ["op": "eval", "save": "unwound", "expr": "document.querySelectorAll('details.thread .stack').length"],
            ["op": "eval", "save": "reasons", "expr": "[...document.querySelectorAll('details.thread > p.muted')].map(p => p.textContent)"],
            [
                "op": "eval", "save": "ownOpacity",
                "expr": "[...document.querySelectorAll('.frame.own')].map(f => getComputedStyle(f).opacity)"
            ],
            ["op": "goto", "url": .string(base + "/ui/issues/\(unwrapIssue)")],
            [
                "op": "eval", "save": "names",
                "expr":
                    "[...document.querySelectorAll('.stack details.name')].map(d => [d.querySelector('summary .fn').textContent, d.querySelector('.fn-full').textContent, d.open])"
            ],
            ["op": "eval", "save": "source", "expr": "[...document.querySelectorAll('.stack pre.source .cur')].map(e => e.textContent)"],
            // The README's picture starts at the stack (the exception above it, the source lines in it).
            ["op": "eval", "save": "scrolled", "expr": "document.querySelector('.stack').previousElementSibling.scrollIntoView(); true"],
            ["op": "screenshot", "path": .string(shots + "/issue-real.png"), "save": "issueShot"],
            ["op": "eval", "save": "sourceLines", "expr": "document.querySelector('.stack pre.source')?.querySelectorAll('span').length"],
            // The <details> opens on a click, without script.
            [
                "op": "eval", "save": "openedByClick",
                "expr": "document.querySelector('.stack details.name > summary').click(); document.querySelector('.stack details.name').open"
            ],
            ["op": "eval", "save": "scripts", "expr": "document.scripts.length"]
        ]
        let r = try Browser.run(steps)
        let nav = (r.values["nav"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(nav, ["Faultline", "Issues", "Release health", "Logs", "Traces", "Alerts", "Debug files"], "after login, every section")
        let listTitles = (r.values["listTitles"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(Set(listTitles).count, 2, "\(listTitles)")

        let threads = (r.values["threads"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertGreaterThanOrEqual(threads.count, 8, "eight parked threads beside the crashed one: \(threads)")
        for name in ["park-sleep", "park-cond", "park-read", "park-poll", "park-spin", "park-mutex", "park-pause", "park-blocked"] {
            XCTAssertTrue(threads.contains { $0.contains(name) }, "\(name) in \(threads)")
        }
        XCTAssertGreaterThanOrEqual(r.values["unwound"]?.int64Value ?? 0, 7, "every thread but the one that blocks signals has a stack")
        let reasons = (r.values["reasons"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertTrue(reasons.contains { $0.contains("blocks signals") }, "the reason a thread has no stack: \(reasons)")
        let own = (r.values["ownOpacity"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertFalse(own.isEmpty, "the parked threads' stacks go through Faultline's own handler")
        XCTAssertTrue(own.allSatisfy { $0 == "0.5" }, "Faultline's own frames are dimmed: \(own)")

        let names = (r.values["names"]?.arrayValue ?? []).compactMap(\.arrayValue)
        let unwrapName = try XCTUnwrap(names.first { $0[1].stringValue?.contains("forceUnwrapNil") == true }, "\(names)")
        let (short, full) = (unwrapName[0].stringValue ?? "", unwrapName[1].stringValue ?? "")
        XCTAssertTrue(short.contains("forceUnwrapNil") && short.count < full.count, "short \(short) vs full \(full)")
        XCTAssertEqual(unwrapName[2].boolValue, false, "the full name is folded until asked for")
        XCTAssertEqual(r.values["openedByClick"]?.boolValue, true)
        let current = (r.values["source"]?.arrayValue ?? []).compactMap(\.stringValue)
        // SwiftFaults.swift: `return value!` is the line that traps.
        XCTAssertTrue(current.contains { $0.contains("return value!") }, "the crashing line, from the uploaded sources: \(current)")
        XCTAssertGreaterThanOrEqual(r.values["sourceLines"]?.int64Value ?? 0, 6, "lines around it")
        XCTAssertEqual(r.values["scripts"]?.int64Value, 0)
        for shot in ["listShot", "issueShot"] { XCTAssertGreaterThan(r.values[shot]?["colors"]?.int64Value ?? 0, 8, "\(shot) looks blank") }
    }
}
