// The issues list's pager tells the truth: every link keeps the list's filters, a page past the
// first has a way back (a previous page, keyset backwards), and "next" appears only when a
// next row exists, so a result of exactly one page offers no empty page.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssuesPagingTests: XCTestCase {
    /// The issue ids of a list page, in order.
    func ids(_ html: String) -> [String] {
        html.components(separatedBy: "<td class=\"title\"><a href=\"/ui/issues/").dropFirst().map { String($0.prefix(while: \.isNumber)) }
    }

    /// The pager link with this `rel`, unescaped, or nil.
    func pagerLink(_ html: String, rel: String) -> String? {
        guard let pager = html.range(of: "<div class=\"pager\">") else { return nil }
        let tail = html[pager.upperBound...]
        guard let r = tail.range(of: "rel=\"\(rel)\" href=\"") else { return nil }
        return String(tail[r.upperBound...].prefix(while: { $0 != "\"" })).replacingOccurrences(of: "&amp;", with: "&")
    }

    func testEveryPagerLinkKeepsTheFiltersAndNextOnlyWhenARowFollows() throws {
        let server = try TestServer()
        defer { server.stop() }
        for i in 0..<57 {
            var e = TestEvents.native(offsets: [0x1000, 0x2000], release: "paged@1", functions: ["main", "app_leaf"])
            e["environment"] = "staging"
            var values = e["exception"]!["values"]!.arrayValue!
            values[0]["type"] = .string("T\(i)")
            e["exception"] = ["values": .array(values)]
            server.ingest(e)
        }
        server.ingest(TestEvents.native(offsets: [0x3000], release: "other@1", functions: ["elsewhere"]))
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let filters = ["sort=first_seen", "status=all", "release=paged%401", "environment=staging", "q=app_leaf"]
        let first = server.page("/ui/projects/default/issues?" + filters.joined(separator: "&"), login).text
        XCTAssertEqual(ids(first).count, 50)
        XCTAssertNil(pagerLink(first, rel: "prev"), "the first page has nothing before it")
        let next = try XCTUnwrap(pagerLink(first, rel: "next"), first)
        for f in filters { XCTAssertTrue(next.contains(f), "next page link \(next) drops \(f)") }

        let second = server.page(next, login).text
        XCTAssertEqual(ids(second).count, 7)
        XCTAssertEqual(Set(ids(first) + ids(second)).count, 57)
        XCTAssertNil(pagerLink(second, rel: "next"), "no row follows the last page")
        let previous = try XCTUnwrap(pagerLink(second, rel: "prev"), "the last page needs a way back: \(second)")
        for f in filters { XCTAssertTrue(previous.contains(f), "previous page link \(previous) drops \(f)") }
        let back = server.page(previous, login).text
        XCTAssertEqual(ids(back), ids(first), "the previous page is the page before")
        XCTAssertNil(pagerLink(back, rel: "prev"), "back on the first rows, nothing precedes")
        XCTAssertNotNil(pagerLink(back, rel: "next"))
        let firstPage = try XCTUnwrap(pagerLink(second, rel: "first"))
        for f in filters { XCTAssertTrue(firstPage.contains(f), "first page link \(firstPage) drops \(f)") }
        XCTAssertFalse(firstPage.contains("after=") || firstPage.contains("before="), firstPage)

        // Exactly one page of results: no "next" to an empty page.
        let resolved = try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 100, offset: 0)
            .filter { $0.title.contains("app_leaf") }.prefix(7).map(\.id)
        try XCTUnwrap(server.server.lifecycle).update(issueIDs: Array(resolved), status: .resolved, details: IssueStatusDetails())
        let exact = server.page("/ui/projects/default/issues?status=unresolved&release=paged%401", login).text
        XCTAssertEqual(ids(exact).count, 50)
        XCTAssertNil(pagerLink(exact, rel: "next"), "50 results are one page: \(exact.suffix(600))")
    }
}
