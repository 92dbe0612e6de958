// Sentry's `eventids` and `shortids` lookups answer with the project and issue an id belongs
// to, in Sentry's shapes; an id of nothing is a 404.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IDLookupAPITests: XCTestCase {
    func testAnEventIdAndAShortIdResolveToTheirIssue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let eventID = "0badc0de0badc0de0badc0de0badc0de"
        server.ingest(TestEvents.native(eventID: eventID, offsets: [0x100], functions: ["alpha_crash"]))
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)

        let byEvent = try server.getJSON("/api/0/organizations/sentry/eventids/0BADC0DE-0BAD-C0DE-0BAD-C0DE0BADC0DE/")
        XCTAssertEqual(byEvent["organizationSlug"]?.stringValue, "sentry")
        XCTAssertEqual(byEvent["projectSlug"]?.stringValue, "default")
        XCTAssertEqual(byEvent["groupId"]?.stringValue, String(issue.id))
        XCTAssertEqual(byEvent["eventId"]?.stringValue, eventID)
        XCTAssertNotNil(byEvent["event"]?.objectValue)

        let byShortID = try server.getJSON("/api/0/organizations/sentry/shortids/DEFAULT-\(issue.id)/")
        XCTAssertEqual(byShortID["projectSlug"]?.stringValue, "default")
        XCTAssertEqual(byShortID["groupId"]?.stringValue, String(issue.id))
        XCTAssertEqual(byShortID["shortId"]?.stringValue, "DEFAULT-\(issue.id)")
        XCTAssertEqual(byShortID["group"]?["id"]?.stringValue, String(issue.id))

        XCTAssertEqual(server.get("/api/0/organizations/sentry/eventids/ffffffffffffffffffffffffffffffff/").status, 404)
        XCTAssertEqual(server.get("/api/0/organizations/sentry/eventids/nope/").status, 404)
        XCTAssertEqual(server.get("/api/0/organizations/sentry/shortids/DEFAULT-999999/").status, 404)
        XCTAssertEqual(server.get("/api/0/organizations/sentry/shortids/OTHER-\(issue.id)/").status, 404)
        XCTAssertEqual(server.get("/api/0/organizations/sentry/shortids/DEFAULT-\(issue.id)/", token: "wrong").status, 401)
    }
}
