// The issue page steps through an issue's occurrences: links to the one just older and the one
// just newer than the occurrence shown (issue 33), and a Swift async caller is marked as such.
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
        let issue = try XCTUnwrap(try server.server.store.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        XCTAssertEqual(issue.count, 3)
        let ids = try server.server.store.occurrences(issueID: issue.id, limit: 3, offset: 0).map(\.id).sorted()
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
}
