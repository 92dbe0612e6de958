// Issue 29 items 6 and 7: what clients stored cannot make one page view cost gigabytes. A view of
// the logs page reads a bounded number of items and bytes and cuts long bodies; the release-health
// page streams its items and passes over the oversized ones the crash-free alert ignores too; a
// trace page at the span cap draws a bounded number of rows.
// Memory is the growth of this process's peak RSS (it hosts the server) while the page renders.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class PageCostTests: XCTestCase {
    func send(_ server: TestServer, type: String, payloads: [JSONValue]) {
        let items = payloads.map { Envelope.Item(type: type, payload: $0.serialized()) }
        let r = server.sendEnvelope(Envelope(header: [:], items: items).serialized())
        XCTAssertEqual(r.status, 200, r.text)
    }

    func testALogsPageViewOverHugeLogItemsStaysSmall() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        // 24 log items of ~1 MiB (the item cap) holding ~16,000 tiny lines each, then 3 items of
        // ten ~100 KiB lines each (the newest): 27 MiB stored.
        for batch in 0..<8 {
            let payloads: [JSONValue] = (0..<3).map { i in
                let base = now - 10_000 - Double(batch * 3 + i) * 100
                return ["items": .array((0..<16_000).map { n in ["timestamp": .double(base - Double(n) / 1000), "level": "info", "body": "x"] })]
            }
            send(server, type: "log", payloads: payloads)
        }
        let long = String(repeating: "0123456789abcdef", count: 6_400)
        let longItems: [JSONValue] = (0..<3).map { i in
            ["items": .array((0..<10).map { n in ["timestamp": .double(now - Double(i * 10 + n)), "level": "warn", "body": .string("line \(n) \(long)")] })]
        }
        send(server, type: "log", payloads: longItems)
        send(server, type: "log", payloads: [["items": [["timestamp": .double(now + 1), "level": "warning", "body": "the newest line"]]]])
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        var page = RawHTTP.Response(status: 0, headers: [:], body: Data())
        let growth = ProcessMemory.peakGrowth { page = server.page("/ui/projects/default/logs", login) }
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("(102407 bytes)"), "a long body is shown cut, with its size")
        XCTAssertLessThan(page.body.count, 2 << 20, "the page's HTML: \(page.body.count) bytes")
        XCTAssertLessThan(growth, 64 << 20, "peak RSS growth while the page rendered: \(growth >> 20) MiB")
        print("logs page: peak RSS growth \(growth >> 20) MiB, HTML \(page.body.count) bytes")
        XCTAssertTrue(page.text.contains("Older →"), "the rest is a page away")
        // The scan behind it: one view reads at most its byte budget plus the item that crossed it.
        var scanned = 0
        let queries = WebQueries(store: server.server.store, database: try XCTUnwrap(server.server.stores.database))
        _ = try queries.scanItems(
            projectID: server.projectID, type: "log", before: nil, maxItems: LogsPage.itemsPerPage, maxBytes: LogsPage.bytesPerPage
        ) { _, _, payload in scanned += payload.count }
        XCTAssertLessThanOrEqual(scanned, LogsPage.bytesPerPage + 1024 * 1024)
        let warnings = server.page("/ui/projects/default/logs?level=warning", login).text
        XCTAssertTrue(warnings.contains("the newest line") && warnings.contains("line 9 0123"), "warning and warn are one level")
    }

    /// A trace at the span cap, every span carrying data: one view of its page reads at most the
    /// cap (TraceLimits) and draws TracePage.shownSpans rows.
    func testATracePageAtTheSpanCapStaysSmall() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        let trace = String(repeating: "7", count: 32), root = String(repeating: "1", count: 16)
        let data: JSONValue = ["db.statement": .string(String(repeating: "SELECT * FROM t WHERE x = ? ", count: 16))]
        for t in 0..<12 {  // 12 × 850 spans: past the cap of 10,000
            let own = t == 0 ? root : String(format: "%016x", 0xf000 + t)
            var context: [String: JSONValue] = ["trace_id": .string(trace), "span_id": .string(own), "op": "task"]
            if t > 0 { context["parent_span_id"] = .string(root) }
            let spans: [JSONValue] = (0..<850).map { i in
                let start = now + Double(t * 850 + i) * 0.0001
                return [
                    "span_id": .string(String(format: "%04x%012x", t + 1, i + 1)), "parent_span_id": .string(own), "trace_id": .string(trace),
                    "description": .string("step \(i)"), "op": "db", "start_timestamp": .double(start), "timestamp": .double(start + 0.00005),
                    "data": data
                ]
            }
            let payload: JSONValue = [
                "type": "transaction", "transaction": .string("batch \(t)"), "start_timestamp": .double(now), "timestamp": .double(now + 2),
                "contexts": ["trace": .object(context)], "spans": .array(spans)
            ]
            send(server, type: "transaction", payloads: [payload])
        }
        let login = try XCTUnwrap(server.webLogin())
        var page = RawHTTP.Response(status: 0, headers: [:], body: Data())
        let started = Date()
        let growth = ProcessMemory.peakGrowth { page = server.page("/ui/projects/default/traces/\(trace)", login) }
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("\(TraceLimits.maxSpansPerTrace) spans"), "the trace holds the cap")
        XCTAssertEqual(page.text.components(separatedBy: "<svg class=\"wf\"").count - 1, TracePage.shownSpans)
        XCTAssertLessThan(page.body.count, 2 << 20, "the page's HTML: \(page.body.count) bytes")
        XCTAssertLessThan(growth, 64 << 20, "peak RSS growth while the page rendered: \(growth >> 20) MiB")
        print("trace page: peak RSS growth \(growth >> 20) MiB, HTML \(page.body.count) bytes, \(Int(took * 1000)) ms")
    }

    func testAHealthPageViewPassesOverOversizedSessionItems() throws {
        let server = try TestServer()
        defer { server.stop() }
        // Aggregates padded to ~200 KiB each (under the 256 KiB item cap, over what the alert
        // reads): 60 of them, 12 MB stored, each claiming a crash.
        let bucket: JSONValue = ["started": "2026-12-01T00:00:00Z", "exited": 0, "crashed": 1]
        let padded: JSONValue = ["attrs": ["release": "app@1"], "aggregates": .array(Array(repeating: bucket, count: 4_000))]
        for _ in 0..<20 { send(server, type: "sessions", payloads: Array(repeating: padded, count: 3)) }
        let small: JSONValue = ["attrs": ["release": "app@1"], "aggregates": [["started": "2026-12-01T00:00:00Z", "exited": 9, "crashed": 1]]]
        send(server, type: "sessions", payloads: [small])
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        var page = RawHTTP.Response(status: 0, headers: [:], body: Data())
        let growth = ProcessMemory.peakGrowth { page = server.page("/ui/projects/default/health", login) }
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("<td class=\"num\">10</td><td class=\"num\">1</td>"), "only the item of normal size counts: \(page.text)")
        XCTAssertLessThan(growth, 48 << 20, "peak RSS growth while the page rendered: \(growth >> 20) MiB")
        print("health page: peak RSS growth \(growth >> 20) MiB")
    }
}
