// The debug-files page (issue 33): a file is named by the binary it belongs to (as events name the
// module), not by the hex name a split debug file is uploaded under; the table fits a 1,400 px
// window; and every issue the file makes readable is one click away ("more").
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class DebugFilesPageTests: XCTestCase {
    func testAFileIsNamedByItsBinaryFitsTheWindowAndListsEveryIssue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-debug-files-page")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let program = try Fixtures.buildProgram(in: dir)
        // The way `faultline debug-files split` names a debug file, by its build-id, and longer
        // still: one word of 181 characters, which must wrap rather than widen the page.
        let hexNamed = dir + "/\(program.buildID.hex)\(String(repeating: "_stripped", count: 15)).debug"
        try FileManager.default.copyItem(atPath: program.path, toPath: hexNamed)
        // Eight issues through the binary: its crash under eight different exception types.
        for k in 0..<8 {
            var e = Fixtures.crashEvent(program)
            var values = e["exception"]!["values"]!.arrayValue!
            values[0]["type"] = .string(k == 0 ? "SIGSEGV" : "Fault\(k)")
            e["exception"] = ["values": .array(values)]
            server.ingest(e)
        }
        try server.waitUntilIdle()
        XCTAssertEqual(try server.uploadDebugFile(hexNamed), "ok")
        try server.waitUntilIdle()
        let issues = try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 20, offset: 0)
        XCTAssertEqual(issues.count, 8, "\(issues.map(\.title))")

        let base = "http://127.0.0.1:\(server.port)"
        try FileManager.default.createDirectory(atPath: WebBrowserTests.screenshotDirectory, withIntermediateDirectories: true)
        var steps = Browser.loginSteps(server)
        steps += [
            ["op": "viewport", "width": 1400, "height": 900],
            ["op": "goto", "url": .string(base + "/ui/debug-files")],
            ["op": "eval", "save": "name", "expr": "document.querySelector('tr.debug-file td.binary a.name').textContent"],
            ["op": "eval", "save": "cell", "expr": "document.querySelector('tr.debug-file td.binary').textContent"],
            ["op": "eval", "save": "widths", "expr": "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"],
            ["op": "eval", "save": "listed", "expr": "document.querySelectorAll('tr.debug-file td.issues a[href^=\"/ui/issues/\"]').length"],
            ["op": "eval", "save": "more", "expr": "document.querySelector('tr.debug-file td.issues a.more')?.textContent"],
            ["op": "screenshot", "path": .string(WebBrowserTests.screenshotDirectory + "/debug-files-1400.png"), "save": "shot"],
            ["op": "eval", "save": "nav", "expr": "[...document.querySelectorAll('header nav a')].map(a => a.textContent)"],
            ["op": "submit", "selector": "tr.debug-file td.issues a.more"],
            ["op": "eval", "save": "filePath", "expr": "location.pathname"],
            ["op": "eval", "save": "fileIssues", "expr": "document.querySelectorAll('tr.file-issue').length"],
            ["op": "eval", "save": "fileWidths", "expr": "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"]
        ]
        let r = try Browser.run(steps)
        XCTAssertEqual(r.values["name"]?.stringValue, "fixture", "named by the binary events name")
        let cell = r.values["cell"]?.stringValue ?? ""
        XCTAssertTrue(cell.contains("uploaded as \((hexNamed as NSString).lastPathComponent)") && cell.contains(program.buildID.hex), cell)
        let widths = (r.values["widths"]?.arrayValue ?? []).compactMap(\.int64Value)
        XCTAssertEqual(widths.count, 2)
        XCTAssertEqual(widths.first, 1400, "the page is as wide as the window")
        XCTAssertLessThanOrEqual(widths.first ?? .max, widths.last ?? 0, "no horizontal overflow: \(widths)")
        XCTAssertEqual(r.values["shot"]?["width"]?.int64Value, 1400)
        XCTAssertEqual(r.values["listed"]?.int64Value, 5)
        XCTAssertEqual(r.values["more"]?.stringValue, "3 more →")
        let nav = (r.values["nav"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(nav, ["Faultline", "Issues", "Release health", "Logs", "Traces", "Alerts", "Debug files"], "every section, off a project's pages too")
        XCTAssertEqual(r.values["filePath"]?.stringValue, "/ui/debug-files/\(program.buildID.hex)")
        XCTAssertEqual(r.values["fileIssues"]?.int64Value, 8, "the file's page lists every issue")
        let fileWidths = (r.values["fileWidths"]?.arrayValue ?? []).compactMap(\.int64Value)
        XCTAssertLessThanOrEqual(fileWidths.first ?? .max, fileWidths.last ?? 0)
    }
}
