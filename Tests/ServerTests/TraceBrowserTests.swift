// The traces pages in headless Chromium: a real trace across two processes (the crasher's
// trace-client calling its trace-serve over HTTP) with an error sent from inside the server
// process's `compute` span. A user clicks from the transactions list to the trace, reads the
// waterfall (nesting drawn as indentation, bars on one time axis), follows the error to its issue
// and the issue's trace id back to the trace; screenshots must not be blank.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class TraceBrowserTests: XCTestCase {
    func testATraceFromTwoProcessesReadsAsAWaterfallLinkedToItsIssue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (traceID, _) = try TraceTests.twoProcessTrace(dsn: server.dsn)
        let tree = try server.getJSON("/api/0/projects/faultline/default/traces/\(traceID)/")
        func find(_ n: JSONValue?, _ name: String) -> JSONValue? {
            if n?["name"]?.stringValue == name { return n }
            for c in n?["children"]?.arrayValue ?? [] { if let f = find(c, name) { return f } }
            return nil
        }
        let compute = try XCTUnwrap(find(tree["roots"]?[0], "compute")?["span_id"]?.stringValue, "\(tree)")
        var event = TestEvents.native(offsets: [0x1000, 0x2000], release: "work@1.0", functions: ["main", "compute_failed"])
        event["contexts"] = ["trace": ["trace_id": .string(traceID), "span_id": .string(compute)]]
        server.ingest(event)
        try server.waitUntilIdle()
        let issueID = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        // The occurrence's trace link is written behind the event.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try server.getJSON("/api/0/projects/faultline/default/traces/\(traceID)/")["occurrences"]?.arrayValue?.isEmpty != false {
            usleep(20_000)
        }
        let shots = WebBrowserTests.screenshotDirectory
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)

        let base = "http://127.0.0.1:\(server.port)"
        var steps = Browser.loginSteps(server)
        steps += [
            ["op": "goto", "url": .string(base + "/ui/projects/default/traces")],
            ["op": "eval", "save": "names", "expr": "[...document.querySelectorAll('tr.transaction .title a')].map(a => a.textContent)"],
            ["op": "screenshot", "path": .string(shots + "/traces.png"), "save": "listShot"],
            // Click as a user would: the client's transaction, then its trace.
            [
                "op": "eval", "save": "marked",
                "expr": "[...document.querySelectorAll('tr.transaction .title a')].find(a => a.textContent === 'client-job').id = 'pick'"
            ],
            ["op": "submit", "selector": "#pick"],
            ["op": "submit", "selector": "table.transactions td a"],
            ["op": "eval", "save": "tracePath", "expr": "location.pathname"],
            [
                "op": "eval", "save": "rows",
                "expr": """
                [...document.querySelectorAll('table.waterfall tbody tr')].map(r => ({
                  name: r.querySelector('.sname').textContent,
                  indent: parseFloat(getComputedStyle(r.cells[0]).paddingLeft),
                  bar: r.querySelector('svg.wf rect').getBoundingClientRect().width,
                  left: r.querySelector('svg.wf rect').getBoundingClientRect().left,
                  error: r.querySelector('ul.occurrences a')?.getAttribute('href') || null }))
                """
            ],
            ["op": "screenshot", "path": .string(shots + "/trace.png"), "save": "traceShot"],
            ["op": "submit", "selector": "table.waterfall ul.occurrences a"],
            ["op": "eval", "save": "issuePath", "expr": "location.pathname"],
            ["op": "submit", "selector": "dl.kv a[href^='/ui/projects/default/traces/']"],
            ["op": "eval", "save": "backPath", "expr": "location.pathname"],
            ["op": "submit", "selector": "main p.muted a[href*='/logs?trace=']"],
            ["op": "eval", "save": "logsPath", "expr": "location.pathname + location.search"]
        ]
        let r = try Browser.run(steps)
        let names = (r.values["names"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(Set(names), ["client-job", "GET /work?user=1"], "one row per process's transaction name")
        XCTAssertEqual(r.values["tracePath"]?.stringValue, "/ui/projects/default/traces/\(traceID)")
        let rows = r.values["rows"]?.arrayValue ?? []
        let byName = Dictionary(rows.compactMap { row in row["name"]?.stringValue.map { ($0, row) } }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(rows.first?["name"]?.stringValue, "client-job", "\(rows)")
        let handled = try XCTUnwrap(byName["GET /work?user=1"], "the server process's transaction: \(rows)")
        let computeRow = try XCTUnwrap(byName["compute"])
        let (rootIndent, handledIndent, computeIndent) = (
            rows.first?["indent"]?.doubleValue ?? 0, handled["indent"]?.doubleValue ?? 0, computeRow["indent"]?.doubleValue ?? 0
        )
        XCTAssertLessThan(rootIndent, handledIndent, "the other process's transaction is drawn nested")
        XCTAssertLessThan(handledIndent, computeIndent)
        for row in rows { XCTAssertGreaterThan(row["bar"]?.doubleValue ?? 0, 0, "every span has a visible bar: \(row)") }
        XCTAssertLessThanOrEqual(rows.first?["left"]?.doubleValue ?? 1, computeRow["left"]?.doubleValue ?? 0, "bars share one time axis")
        XCTAssertEqual(computeRow["error"]?.stringValue?.hasPrefix("/ui/issues/\(issueID)?event="), true, "the error sits on compute: \(rows)")
        XCTAssertEqual(rows.filter { $0["error"]?.stringValue != nil }.count, 1)
        XCTAssertEqual(r.values["issuePath"]?.stringValue, "/ui/issues/\(issueID)")
        XCTAssertEqual(r.values["backPath"]?.stringValue, "/ui/projects/default/traces/\(traceID)", "the issue's trace id links to the trace")
        XCTAssertEqual(r.values["logsPath"]?.stringValue, "/ui/projects/default/logs?trace=\(traceID)")
        XCTAssertTrue(r.requests.allSatisfy { $0.hasPrefix(base + "/") }, "nothing but our own pages and stylesheet: \(r.requests)")
        for (shot, name) in [(r.values["listShot"], "transactions list"), (r.values["traceShot"], "trace page")] {
            XCTAssertEqual(shot?["width"]?.int64Value, 1280, name)
            XCTAssertGreaterThan(shot?["colors"]?.int64Value ?? 0, 8, "\(name) looks blank (single colour)")
        }
    }
}
