// What one project's pages show is that project's: the issues page's environment menu lists the
// environments of its own issues (every project's were listed, another's names leaking into it),
// and a user id sent as a number (sentry-javascript's `setUser({id: 123})`) counts as the
// install it names, as Relay reads it (it was ignored: "installs affected 0").
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssuesPageProjectScopeTests: XCTestCase {
    func testTheEnvironmentMenuListsOnlyTheProjectsOwnEnvironments() throws {
        let server = try TestServer()
        defer { server.stop() }
        var mine = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
        mine["environment"] = "canary-own"
        server.ingest(mine)
        let projects = server.server.stores.projects
        let other = try projects.createProject(slug: "other", name: "Other")
        let key = try projects.createPublicKey(projectID: other.id, allowedAppIDs: [])
        var theirs = TestEvents.native(offsets: [0x200], functions: ["beta_crash"])
        theirs["environment"] = "staging-of-another-project"
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(theirs), key: key.key.value, project: String(other.id)).status, 200)
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/projects/default/issues", login).text
        XCTAssertTrue(page.contains("<option value=\"canary-own\""), page)
        XCTAssertFalse(page.contains("staging-of-another-project"), "another project's environment is not offered")
        XCTAssertTrue(server.page("/ui/projects/other/issues", login).text.contains("staging-of-another-project"))
    }

    func testANumericUserIDCountsAsTheInstallItNames() throws {
        let server = try TestServer()
        defer { server.stop() }
        for id in [101, 102, 103] {
            var e = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
            e["user"] = ["id": .int(Int64(id))]
            server.ingest(e)
        }
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue.id)", login).text
        XCTAssertTrue(page.contains("<dt>installs affected</dt><dd>3</dd>"), page)
    }
}
