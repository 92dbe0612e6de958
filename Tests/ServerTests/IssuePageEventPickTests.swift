// The issue page's `?event=` picks one occurrence of that issue; an id that is not one of its
// occurrences (another issue's, none at all, not a number) is a 404 that says so, never the
// latest occurrence shown as if it were the one asked for.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssuePageEventPickTests: XCTestCase {
    func testAnOccurrenceOfAnotherIssueOrNoneIsNotFound() throws {
        let server = try TestServer()
        defer { server.stop() }
        let two = try TwoIssues(on: server, betaOccurrences: 2)
        let (alpha, beta, login) = (two.alpha, two.beta, two.login)
        let alphaOccurrence = try XCTUnwrap(server.server.stores.issueReads.occurrences(issueID: alpha.id, limit: 1, offset: 0).first)
        let betaOccurrences = try server.server.stores.issueReads.occurrences(issueID: beta.id, limit: 10, offset: 0)
        XCTAssertEqual(betaOccurrences.count, 2)

        let own = server.page("/ui/issues/\(beta.id)?event=\(betaOccurrences[1].id)", login)
        XCTAssertEqual(own.status, 200)
        XCTAssertTrue(own.text.contains(betaOccurrences[1].eventID), "the picked occurrence is shown")
        for wrong in ["\(alphaOccurrence.id)", "99999", "abc"] {
            let r = server.page("/ui/issues/\(beta.id)?event=\(wrong)", login)
            XCTAssertEqual(r.status, 404, "?event=\(wrong)")
            XCTAssertFalse(r.text.contains(betaOccurrences[0].eventID), "?event=\(wrong) must not show the latest occurrence")
            XCTAssertTrue(r.text.contains("no occurrence"), r.text)
        }
    }

    func testAnOccurrenceOfAnIssueMergedInStillOpens() throws {
        let server = try TestServer()
        defer { server.stop() }
        let two = try TwoIssues(on: server)
        let (alpha, beta, login) = (two.alpha, two.beta, two.login)
        let alphaOccurrence = try XCTUnwrap(server.server.stores.issueReads.occurrences(issueID: alpha.id, limit: 1, offset: 0).first)
        XCTAssertEqual(server.postForm("/ui/issues/\(alpha.id)/merge", login, ["_csrf": login.csrf, "into": String(beta.id)]).status, 303)
        let r = server.page("/ui/issues/\(beta.id)?event=\(alphaOccurrence.id)", login)
        XCTAssertEqual(r.status, 200)
        XCTAssertTrue(r.text.contains(alphaOccurrence.eventID))
    }
}
