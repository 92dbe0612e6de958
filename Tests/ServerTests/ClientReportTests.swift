// What SDKs reported losing reaches the people who run them: the Faultline SDK's client reports
// (an evicted log envelope is its lines and bytes) and sentry-python's are summed per reason and
// kind on the release-health page and in the API; a client's odd names and numbers do not count.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ClientReportTests: XCTestCase {
    func report(_ discarded: [JSONValue]) -> Data {
        let payload: JSONValue = ["timestamp": .double(Date().timeIntervalSince1970), "discarded_events": .array(discarded)]
        return Envelope(header: [:], items: [Envelope.Item(type: "client_report", payload: payload.serialized())]).serialized()
    }

    func testLossesAreSummedPerReasonAndKindOnTheHealthPageAndInTheAPI() throws {
        let server = try TestServer()
        defer { server.stop() }
        // The Swift SDK's report after an evicted log envelope of 20 lines, and a rejected event.
        let swiftSDK = report([
            ["reason": "queue_overflow", "category": "log_item", "quantity": 20],
            ["reason": "queue_overflow", "category": "log_byte", "quantity": 2_400],
            ["reason": "send_error", "category": "error", "quantity": 1]
        ])
        // sentry-python's shape: the same reasons and categories, one more eviction.
        let python = report([
            ["reason": "queue_overflow", "category": "log_item", "quantity": 5], ["reason": "ratelimit_backoff", "category": "error", "quantity": 2]
        ])
        // A client's junk: a negative number, a control character, a name of a kilobyte.
        let junk = report([
            ["reason": "queue_overflow", "category": "log_item", "quantity": -7],
            ["reason": "a\nb", "category": "error", "quantity": 1],
            ["reason": .string(String(repeating: "x", count: 1_000)), "category": "error", "quantity": 1]
        ])
        for body in [swiftSDK, python, junk] { XCTAssertEqual(server.sendEnvelope(body).status, 200) }

        let rows = try server.getJSON("/api/0/projects/faultline/default/client-reports/").arrayValue ?? []
        func quantity(_ reason: String, _ category: String) -> Int64? {
            rows.first { $0["reason"]?.stringValue == reason && $0["category"]?.stringValue == category }?["quantity"]?.int64Value
        }
        XCTAssertEqual(quantity("queue_overflow", "log_item"), 25)
        XCTAssertEqual(quantity("queue_overflow", "log_byte"), 2_400)
        XCTAssertEqual(quantity("send_error", "error"), 1)
        XCTAssertEqual(quantity("ratelimit_backoff", "error"), 2)
        XCTAssertEqual(rows.count, 4, "nothing of the junk: \(rows)")
        let future = Date().timeIntervalSince1970 + 60
        XCTAssertEqual(try server.getJSON("/api/0/projects/faultline/default/client-reports/?since=\(future)").arrayValue?.count, 0)

        let login = try XCTUnwrap(server.webLogin())
        let health = server.page("/ui/projects/default/health", login).text
        XCTAssertTrue(health.contains("Lost by the SDKs before sending"), health)
        XCTAssertTrue(health.contains("<td>queue_overflow</td><td>log_item</td><td class=\"num\">25</td>"), health)
    }
}
