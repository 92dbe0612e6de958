// The issues list's search box takes what people copy: an event id as SDKs print it (32 hex
// digits, with or without dashes) or the short id the issue page shows (`DEFAULT-12`), and goes
// straight to that issue.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssueJumpSearchTests: XCTestCase {
    func testAnEventIdOrAShortIdGoesToItsIssue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let eventID = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
        let two = try TwoIssues(on: server, alphaEventID: eventID)
        let (alpha, beta, login) = (two.alpha, two.beta, two.login)
        let occurrence = try XCTUnwrap(server.server.store.occurrence(projectID: server.projectID, eventID: eventID))

        for typed in [eventID, "A1B2C3D4-E5F6-0718-293A-4B5C6D7E8F90", " a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90 "] {
            let r = server.page("/ui/projects/default/issues?q=" + (typed.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), login)
            XCTAssertEqual(r.status, 303, typed)
            XCTAssertEqual(r.headers["location"], "/ui/issues/\(alpha.id)?event=\(occurrence.id)", typed)
        }
        for typed in ["DEFAULT-\(beta.id)", "default-\(beta.id)"] {
            let r = server.page("/ui/projects/default/issues?q=\(typed)", login)
            XCTAssertEqual(r.status, 303, typed)
            XCTAssertEqual(r.headers["location"], "/ui/issues/\(beta.id)", typed)
        }
        // Not this project's issue, or no such event: an ordinary search that finds nothing.
        for typed in ["OTHER-\(beta.id)", "DEFAULT-999999", "ffffffffffffffffffffffffffffffff"] {
            let r = server.page("/ui/projects/default/issues?q=\(typed)", login)
            XCTAssertEqual(r.status, 200, typed)
            XCTAssertTrue(r.text.contains("No issues match."), typed)
        }
    }
}
