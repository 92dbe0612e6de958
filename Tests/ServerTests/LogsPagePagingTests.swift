// The logs page reaches every matching line: 700 lines sent in two items (as sentry-python's
// logger batches them) make five pages of at most 150, each line on exactly one, by following
// "Older →" (the page trimmed what it had read to its newest 150 and went on past both items:
// 550 lines could not be reached).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LogsPagePagingTests: XCTestCase {
    func testOlderLinksReachEveryLineOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        for batch in 0..<2 {
            let items: [JSONValue] = (0..<350).map { i in
                let n = batch * 350 + i
                return ["timestamp": .double(now - 1000 + Double(n) * 0.5), "level": "info", "body": .string("paging line \(n) end")]
            }
            let log: JSONValue = ["items": .array(items)]
            let env = Envelope(header: [:], items: [Envelope.Item(type: "log", payload: log.serialized())])
            XCTAssertEqual(server.sendEnvelope(env.serialized()).status, 200)
        }
        // One unrelated line the filter must leave out.
        let other: JSONValue = ["items": [["timestamp": .double(now), "level": "info", "body": "something else"]]]
        XCTAssertEqual(server.sendEnvelope(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: other.serialized())]).serialized()).status, 200)
        let login = try XCTUnwrap(server.webLogin())
        var path = "/ui/projects/default/logs?q=paging"
        var seen: [Int] = []
        var pages = 0
        while pages < 20 {
            pages += 1
            let html = server.page(path, login).text
            let numbers = html.components(separatedBy: "paging line ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
            XCTAssertLessThanOrEqual(numbers.count, LogsPage.linesPerPage, "page \(pages)")
            XCTAssertEqual(numbers, numbers.sorted(by: >), "page \(pages) is newest first")
            seen += numbers
            guard let r = html.range(of: "<div class=\"pager\"><a href=\"") else { break }
            path = String(html[r.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
        }
        XCTAssertEqual(seen.count, 700, "every line on some page")
        XCTAssertEqual(Set(seen).count, 700, "and on one only")
        XCTAssertEqual(seen, seen.sorted(by: >), "newest first across pages")
        XCTAssertEqual(pages, 5)
    }
}
