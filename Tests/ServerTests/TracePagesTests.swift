// The traces pages and the logs page's attributes, rendered by the real server from transactions,
// an error and log lines sent through real ingest: the transactions list grouped by name with its
// filters, a trace from two processes as one nested waterfall with the error on the span it
// happened in, the links between issue, trace and logs, `key:value` log filters, and the bound
// on what one trace page draws.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class TracePagesTests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws { server = try TestServer() }
    override func tearDown() { server?.stop() }

    static func hex(_ n: Int) -> String { UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(n).description }

    struct Span {
        var id: String
        var parent: String?
        var name: String
        var op: String
        var start: Double
        var end: Double
        var status = "ok"
    }

    /// One process's transaction: `root` is its own span, `children` its child spans.
    func sendTransaction(trace: String, root: Span, children: [Span] = [], file: StaticString = #filePath, line: UInt = #line) {
        var context: [String: JSONValue] = [
            "trace_id": .string(trace), "span_id": .string(root.id), "op": .string(root.op), "status": .string(root.status)
        ]
        if let p = root.parent { context["parent_span_id"] = .string(p) }
        let eventID = Self.hex(32)
        let payload: JSONValue = [
            "type": "transaction", "event_id": .string(eventID), "transaction": .string(root.name),
            "start_timestamp": .double(root.start), "timestamp": .double(root.end), "contexts": ["trace": .object(context)],
            "spans": .array(
                children.map { s in
                    [
                        "span_id": .string(s.id), "parent_span_id": .string(s.parent ?? root.id), "trace_id": .string(trace),
                        "description": .string(s.name), "op": .string(s.op), "status": .string(s.status),
                        "start_timestamp": .double(s.start), "timestamp": .double(s.end)
                    ]
                })
        ]
        let envelope = Envelope(header: ["event_id": .string(eventID)], items: [Envelope.Item(type: "transaction", payload: payload.serialized())])
        XCTAssertEqual(server.sendEnvelope(envelope.serialized()).status, 200, file: file, line: line)
    }

    /// Polls a page until it contains `text` (ingest groups and links occurrences in the background).
    func page(_ path: String, _ login: WebLogin, containing text: String, timeout: TimeInterval = 30) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        repeat {
            last = server.page(path, login).text
            if last.contains(text) { return last }
            usleep(50_000)
        } while Date() < deadline
        return last
    }

    /// A checkout in process A calling a payment service in process B, whose card charge fails
    /// with an error event sent from inside that span.
    func seedTwoProcessTrace(now: Double) -> (trace: String, errorEventID: String) {
        let trace = Self.hex(32)
        let (a1, a2, a3, b1, b2) = (Self.hex(16), Self.hex(16), Self.hex(16), Self.hex(16), Self.hex(16))
        sendTransaction(
            trace: trace, root: Span(id: a1, name: "GET /checkout", op: "http.server", start: now, end: now + 0.5),
            children: [
                Span(id: a2, name: "SELECT cart", op: "db.query", start: now + 0.01, end: now + 0.05),
                Span(id: a3, name: "POST /pay", op: "http.client", start: now + 0.1, end: now + 0.4)
            ])
        sendTransaction(
            trace: trace, root: Span(id: b1, parent: a3, name: "POST /pay", op: "http.server", start: now + 0.12, end: now + 0.38),
            children: [Span(id: b2, name: "charge card", op: "payment", start: now + 0.15, end: now + 0.3, status: "internal_error")])
        var event = TestEvents.native(offsets: [0x1000, 0x2000], release: "pay@1.0", functions: ["main", "charge"])
        event["contexts"] = ["trace": ["trace_id": .string(trace), "span_id": .string(b2)]]
        server.ingest(event)
        return (trace, event["event_id"]?.stringValue ?? "")
    }

    func testTransactionsListGroupsByNameWithPercentilesFailedShareAndFilters() throws {
        let login = try XCTUnwrap(server.webLogin())
        let now = Date().timeIntervalSince1970
        for (i, ms) in [100.0, 200, 300, 400].enumerated() {
            sendTransaction(
                trace: Self.hex(32), root: Span(id: Self.hex(16), name: "GET /checkout", op: "http.server", start: now, end: now + ms / 1000))
            if i < 2 {
                sendTransaction(
                    trace: Self.hex(32),
                    root: Span(id: Self.hex(16), name: "POST /pay", op: "http.server", start: now, end: now + 0.05, status: i == 0 ? "internal_error" : "ok"))
            }
        }
        sendTransaction(trace: Self.hex(32), root: Span(id: Self.hex(16), name: "<b>job</b>", op: "task", start: now, end: now + 1))

        let list = server.page("/ui/projects/default/traces", login)
        XCTAssertEqual(list.status, 200)
        XCTAssertTrue(list.text.contains("href=\"/ui/projects/default/traces\">Traces</a>"), "the project navigation links the traces")
        let rows = list.text.components(separatedBy: "<tr class=\"transaction\">").dropFirst()
        let checkout = try XCTUnwrap(rows.first { $0.contains("GET /checkout") })
        XCTAssertTrue(checkout.contains("<td class=\"num\">4</td>"), checkout)
        XCTAssertTrue(checkout.contains("200.0 ms") && checkout.contains("400.0 ms"), "p50 and p95 by nearest rank: \(checkout)")
        XCTAssertTrue(checkout.contains("0.0 %"), checkout)
        let pay = try XCTUnwrap(rows.first { $0.contains("POST /pay") })
        XCTAssertTrue(pay.contains("<td class=\"num\">2</td>") && pay.contains("50.0 %"), pay)
        XCTAssertTrue(list.text.contains("&lt;b&gt;job&lt;/b&gt;") && !list.text.contains("<b>job"), "names are escaped")
        XCTAssertTrue(rows.first?.contains("GET /checkout") ?? false, "busiest first")

        let named = server.page("/ui/projects/default/traces?q=CHECK", login).text
        XCTAssertTrue(named.contains("GET /checkout") && !named.contains("POST /pay"), "name filter, any case")
        let failed = server.page("/ui/projects/default/traces?status=error", login).text
        XCTAssertTrue(failed.contains("POST /pay") && !failed.contains("GET /checkout"))
        XCTAssertTrue(failed.contains("100.0 %"), "only the failed one is counted under the filter")
        XCTAssertTrue(server.page("/ui/projects/default/traces?period=1h", login).text.contains("GET /checkout"))

        // One name's traces, each linking to its trace page.
        let one = server.page("/ui/projects/default/traces?name=GET%20%2Fcheckout", login).text
        XCTAssertEqual(one.components(separatedBy: "href=\"/ui/projects/default/traces/").count - 1, 4, one)
        XCTAssertFalse(one.contains("POST /pay"))
    }

    func testATraceFromTwoProcessesIsOneNestedWaterfallWithTheErrorOnItsSpan() throws {
        let login = try XCTUnwrap(server.webLogin())
        let now = Date().timeIntervalSince1970
        let (trace, eventID) = seedTwoProcessTrace(now: now)
        let path = "/ui/projects/default/traces/\(trace)"
        let page = self.page(path, login, containing: "/ui/issues/")
        XCTAssertTrue(page.contains("5 spans"), page)
        XCTAssertTrue(page.contains("href=\"/ui/projects/default/logs?trace=\(trace)\""), "a link to the trace's logs")
        XCTAssertFalse(page.contains("<script"))
        XCTAssertNil(page.range(of: " style=", options: .regularExpression), "bars and indentation without inline style")
        // Depth-first, nested across the process boundary: the payment service's transaction
        // hangs under the checkout's outgoing call.
        let rows = page.components(separatedBy: "<tr class=\"").dropFirst()
        func depth(_ name: String) -> String? {
            rows.first { $0.contains("<span class=\"sname\">\(name)</span>") }.flatMap { r in
                r.range(of: "class=\"sd").map { String(r[$0.upperBound...].prefix { $0.isNumber }) }
            }
        }
        XCTAssertEqual(depth("GET /checkout"), "0")
        XCTAssertEqual(depth("SELECT cart"), "1")
        XCTAssertEqual(depth("POST /pay"), "1")  // the client span (first of the two of that name)
        XCTAssertEqual(depth("charge card"), "3")
        let names = rows.compactMap { r in r.range(of: "<span class=\"sname\">").map { String(r[$0.upperBound...].prefix { $0 != "<" }) } }
        XCTAssertEqual(names, ["GET /checkout", "SELECT cart", "POST /pay", "POST /pay", "charge card"])
        let charge = try XCTUnwrap(rows.first { $0.contains(">charge card<") })
        XCTAssertTrue(charge.hasPrefix("span err"), "a failed span is marked")
        XCTAssertTrue(charge.contains("internal_error"))
        XCTAssertTrue(charge.contains("?event=") && charge.contains(String(eventID.prefix(12))), "the error sits on the span it happened in: \(charge)")
        XCTAssertTrue(charge.contains("150.0 ms"), "the span's duration")
        XCTAssertTrue(charge.contains("<svg class=\"wf\""), "its bar on the trace's time axis")
        XCTAssertFalse(try XCTUnwrap(rows.first { $0.contains(">SELECT cart<") }).contains("/ui/issues/"))

        // The issue links to its trace; the API names the trace by the project's slug.
        let issueLink = try XCTUnwrap(charge.range(of: "href=\"/ui/issues/").map { String(charge[$0.upperBound...].prefix { $0 != "\"" }) })
        let issue = server.page("/ui/issues/\(issueLink.replacingOccurrences(of: "&amp;", with: "&"))", login)
        XCTAssertEqual(issue.status, 200)
        XCTAssertTrue(issue.text.contains("<a href=\"/ui/projects/default/traces/\(trace)\">\(trace)</a>"), "the trace id under Contexts is a link")
        XCTAssertTrue(issue.text.contains("href=\"/ui/projects/default/traces/\(trace)\">trace</a>"))
        let api = try server.getJSON("/api/0/projects/faultline/default/events/\(eventID)/")
        XCTAssertEqual(api["trace"]?["url"]?.stringValue, "/api/0/projects/faultline/default/traces/\(trace)/")
        let viaURL = try server.getJSON(try XCTUnwrap(api["trace"]?["url"]?.stringValue))
        XCTAssertEqual(viaURL["span_count"]?.int64Value, 5)
        XCTAssertEqual(viaURL["occurrences"]?[0]?["url"]?.stringValue, "/api/0/projects/faultline/default/events/\(eventID)/")

        XCTAssertEqual(server.page("/ui/projects/default/traces/\(Self.hex(32))", login).status, 404)
        XCTAssertEqual(server.page("/ui/projects/default/traces/not-a-trace", login).status, 404)
        XCTAssertEqual(server.page("/ui/projects/nope/traces/\(trace)", login).status, 404)
    }

    func testATracePageDrawsABoundedNumberOfSpans() throws {
        let login = try XCTUnwrap(server.webLogin())
        let now = Date().timeIntervalSince1970
        let trace = Self.hex(32), root = Self.hex(16)
        // Three transactions of 850 spans (one stays under the item size cap), the later two
        // under the first's root: 2,553 spans in all.
        for t in 0..<3 {
            let own = t == 0 ? root : Self.hex(16)
            let children = (0..<850).map { i in
                let start = now + Double(t * 850 + i) * 0.001
                return Span(id: String(format: "%04x%012x", t + 1, i + 1), parent: own, name: "step \(i)", op: "task", start: start, end: start + 0.0005)
            }
            sendTransaction(
                trace: trace, root: Span(id: own, parent: t == 0 ? nil : root, name: "batch \(t)", op: "task", start: now, end: now + 3), children: children)
        }
        let page = server.page("/ui/projects/default/traces/\(trace)", login)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.text.components(separatedBy: "<svg class=\"wf\"").count - 1, TracePage.shownSpans)
        XCTAssertTrue(page.text.contains("2553 spans"), "the count is of every span")
        XCTAssertTrue(page.text.contains("\(2553 - TracePage.shownSpans) more spans are not drawn"))
    }

    func testLogLinesShowTheirAttributesFilterByKeyValueAndLinkTheirTrace() throws {
        let login = try XCTUnwrap(server.webLogin())
        let now = Date().timeIntervalSince1970
        let trace = Self.hex(32)
        func line(_ body: String, _ attributes: [String: JSONValue]) -> JSONValue {
            var a: [String: JSONValue] = ["sentry.environment": ["value": "prod", "type": "string"]]
            for (k, v) in attributes { a[k] = v }
            return ["timestamp": .double(now), "trace_id": .string(trace), "level": "info", "body": .string(body), "attributes": .object(a)]
        }
        let item = Envelope.Item(
            type: "log",
            payload: JSONValue.object([
                "items": [
                    line("order paid", ["order_id": ["value": 42, "type": "integer"], "ms": ["value": 12.5, "type": "double"]]),
                    line("order shipped", ["order_id": ["value": 43, "type": "integer"], "carrier": ["value": "<ups>", "type": "string"]])
                ]
            ]).serialized())
        server.ingest(TestEvents.native(offsets: [0x1000]), items: [item])

        let all = page("/ui/projects/default/logs", login, containing: "order shipped")
        XCTAssertTrue(all.contains("order_id=42") && all.contains("ms=12.5") && all.contains("order_id=43"), all)
        XCTAssertTrue(all.contains("carrier=&lt;ups&gt;") && !all.contains("<ups>"), "attribute values are escaped")
        XCTAssertTrue(all.contains("href=\"/ui/projects/default/traces/\(trace)\""), "a trace column links to the trace page")
        XCTAssertTrue(all.contains("href=\"/ui/projects/default/logs?q=order_id%3A42\""), "an attribute links to its filter")
        XCTAssertTrue(all.contains("SDK attributes (1)"), "the SDK's own attributes are folded away")

        let only42 = server.page("/ui/projects/default/logs?q=order_id%3A42", login).text
        XCTAssertTrue(only42.contains("order paid") && !only42.contains("order shipped"), only42)
        XCTAssertTrue(server.page("/ui/projects/default/logs?q=order_id%3A43+shipped", login).text.contains("order shipped"))
        XCTAssertFalse(server.page("/ui/projects/default/logs?q=order_id%3A43+paid", login).text.contains("order shipped"))
        XCTAssertFalse(server.page("/ui/projects/default/logs?q=order_id%3A44", login).text.contains("order "))
        XCTAssertTrue(server.page("/ui/projects/default/logs?q=sentry.environment%3Aprod", login).text.contains("order shipped"))
        XCTAssertTrue(server.page("/ui/projects/default/logs?trace=\(trace)", login).text.contains("order paid"), "the trace page's logs link")
    }
}
