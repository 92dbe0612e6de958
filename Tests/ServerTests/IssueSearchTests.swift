// The issues list's search box takes `key:value` terms beside free text (issue 33 item 4):
// `release:`, `env:`/`environment:` and `is:` set the filters they name; other keys are tags.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssueSearchTests: XCTestCase {
    func testTermsSetTheirFiltersAndTheRestIsText() {
        var q = IssueQuery()
        q.text = "release:1.2 env:prod disk  full is:resolved owner:me"
        _ = q.applyTerms()
        XCTAssertEqual(q.release, "1.2")
        XCTAssertEqual(q.environment, "prod")
        XCTAssertEqual(q.status, "resolved")
        XCTAssertEqual(q.text, "disk full")
        XCTAssertEqual(q.tags, [EventTag(key: "owner", value: "me")], "any other key is a tag (IssueTagsTests)")
        var bad = IssueQuery()
        bad.text = "is:sometimes release:"
        XCTAssertEqual(bad.applyTerms(), ["is:sometimes"])
        XCTAssertEqual(bad.status, "unresolved")
        XCTAssertEqual(bad.text, "is:sometimes release:")
    }

    func testAReleaseTermNarrowsTheList() throws {
        let server = try TestServer()
        defer { server.stop() }
        let first = TestEvents.native(offsets: [0x10], release: "app@1", functions: ["alpha_crash"])
        let second = TestEvents.native(offsets: [0x20, 0x30], release: "app@2", functions: ["beta_crash", "beta_caller"])
        for e in [first, second] { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200) }
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let all = server.page("/ui/projects/default/issues", login).text
        XCTAssertTrue(all.contains("alpha_crash") && all.contains("beta_caller"))
        let narrowed = server.page("/ui/projects/default/issues?q=release%3Aapp%402", login).text
        XCTAssertTrue(narrowed.contains("beta_caller"), narrowed)
        XCTAssertFalse(narrowed.contains("alpha_crash"))
    }
}
