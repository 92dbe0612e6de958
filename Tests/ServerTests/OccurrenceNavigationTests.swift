// The issue page steps through an issue's occurrences (links to the one just older and the one
// just newer than the occurrence shown) and breaks them down by release and install (issue 33).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class OccurrenceNavigationTests: XCTestCase {
    func testTheIssuePageLinksTheOlderAndNewerOccurrence() throws {
        let server = try TestServer()
        defer { server.stop() }
        for _ in 0..<3 { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20]))).status, 200) }
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        XCTAssertEqual(issue.count, 3)
        let ids = try server.server.stores.issueReads.occurrences(issueID: issue.id, limit: 3, offset: 0).map(\.id).sorted()
        let login = try XCTUnwrap(server.webLogin())
        let latest = server.page("/ui/issues/\(issue.id)", login).text
        XCTAssertTrue(latest.contains("?event=\(ids[1])\">← older occurrence"), "the latest links the one before it")
        XCTAssertFalse(latest.contains("newer occurrence"), "nothing is newer than the latest")
        let middle = server.page("/ui/issues/\(issue.id)?event=\(ids[1])", login).text
        XCTAssertTrue(middle.contains("?event=\(ids[0])\">← older occurrence"))
        XCTAssertTrue(middle.contains("?event=\(ids[2])\">newer occurrence →"))
        let oldest = server.page("/ui/issues/\(issue.id)?event=\(ids[0])", login).text
        XCTAssertFalse(oldest.contains("older occurrence"))
        XCTAssertTrue(oldest.contains("newer occurrence"))
    }

    /// The issue page says which releases and installs its occurrences come from, with bars.
    func testTheIssuePageBreaksOccurrencesDownByReleaseAndInstall() throws {
        let server = try TestServer()
        defer { server.stop() }
        for (release, install) in [("app@1", "i-1"), ("app@1", "i-2"), ("app@2", "i-1")] {
            let event = TestEvents.native(offsets: [0x10, 0x20], release: release, installID: install)
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        }
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue.id)", login).text
        XCTAssertTrue(page.contains("<h2>Breakdown <span class=\"muted\">(newest 3 occurrences)</span></h2>"), page)
        XCTAssertTrue(page.contains("<td title=\"app@1\">app@1</td><td class=\"num\">2</td>"), "releases, most frequent first")
        XCTAssertTrue(page.contains("<td title=\"app@2\">app@2</td><td class=\"num\">1</td>"))
        XCTAssertTrue(page.contains("<td title=\"i-1\">i-1</td><td class=\"num\">2</td>"), "installs")
        XCTAssertTrue(page.contains("<td title=\"production\">production</td><td class=\"num\">3</td>"), "environments (none named: production)")
        XCTAssertTrue(page.contains(" 67 %"), "a share of the occurrences")
        // The figures are reused between views, never past a new occurrence (WebQueries.memoized).
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20], release: "app@3", installID: "i-3"))).status, 200)
        try server.waitUntilIdle()
        let again = server.page("/ui/issues/\(issue.id)", login).text
        XCTAssertTrue(again.contains("<td title=\"app@3\">app@3</td><td class=\"num\">1</td>"), "the new occurrence's release")
        XCTAssertTrue(again.contains("(newest 4 occurrences)") && again.contains("<dt>installs affected</dt><dd>3</dd>"), again)
    }
}
