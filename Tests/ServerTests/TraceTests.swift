// Traces on the server: transactions from Python's sentry-sdk and from our SDK stored as one
// tree per trace, a real HTTP hop between two processes reassembled, a crash inside a span linked
// to its trace, the recent-traces list with its filters, and retention by age.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class TraceTests: XCTestCase {
    let crasher = TestSupport.product("faultline-crasher")
    let env = ["SWIFT_BACKTRACE": "enable=no"]

    func tracePath(_ server: TestServer, _ traceID: String) -> String { "/api/0/projects/faultline/\(server.projectID)/traces/\(traceID)/" }

    /// The names of a tree node's children.
    func childNames(_ node: JSONValue?) -> [String] { node?["children"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [] }
    func child(_ node: JSONValue?, _ name: String) -> JSONValue? { node?["children"]?.arrayValue?.first { $0["name"]?.stringValue == name } }

    func transactionEnvelope(traceID: String, spanID: String, name: String, status: String, start: Double, children: [JSONValue] = []) -> Data {
        let eventID = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let payload: JSONValue = [
            "type": "transaction", "event_id": .string(eventID), "transaction": .string(name),
            "start_timestamp": .double(start), "timestamp": .double(start + 0.25),
            "contexts": ["trace": ["trace_id": .string(traceID), "span_id": .string(spanID), "op": "task", "status": .string(status)]],
            "spans": .array(children)
        ]
        return Envelope(header: ["event_id": .string(eventID)], items: [Envelope.Item(type: "transaction", payload: payload.serialized())]).serialized()
    }

    func testPythonSentrySDKTraceIsStoredAndReturnedAsATree() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else {
            return XCTFail("sentry-sdk is not installed (tools/setup runs pip install sentry-sdk)")
        }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-trace")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, time, sentry_sdk
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, traces_sample_rate=1.0, release="py@1.0")
            with sentry_sdk.start_transaction(op="task", name="upload") as t:
                with t.start_child(op="db.query", name="SELECT 1") as q:
                    with q.start_child(op="serialize", name="rows to json"):
                        time.sleep(0.01)
                with t.start_child(op="http.client", name="PUT /blob") as h:
                    h.set_status("not_found")
            print(t.trace_id)
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/trace.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/trace.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let traceID = try XCTUnwrap(r.stdout.split(separator: "\n").map { String($0) }.first { $0.count == 32 }, r.stdout)

        let trace = try server.getJSON(tracePath(server, traceID))
        XCTAssertEqual(trace["span_count"]?.int64Value, 4)
        let roots = try XCTUnwrap(trace["roots"]?.arrayValue)
        XCTAssertEqual(roots.count, 1)
        let root = roots.first
        XCTAssertEqual(root?["name"]?.stringValue, "upload")
        XCTAssertEqual(root?["transaction"]?.boolValue, true)
        XCTAssertEqual(Set(childNames(root)), ["SELECT 1", "PUT /blob"])
        XCTAssertEqual(childNames(child(root, "SELECT 1")), ["rows to json"])
        XCTAssertEqual(child(root, "PUT /blob")?["status"]?.stringValue, "not_found")
        let rows = try XCTUnwrap(child(child(root, "SELECT 1"), "rows to json")?["duration_ms"]?.doubleValue)
        XCTAssertGreaterThanOrEqual(rows, 9, "durations in milliseconds")

        let list = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/traces/?name=upload")
        XCTAssertEqual(list.arrayValue?.first?["trace_id"]?.stringValue, traceID)
    }

    /// The crasher's `trace-serve` and a `trace-client` calling it over HTTP: one trace across two
    /// processes, sent to `dsn`. Returns the trace id and the port trace-serve listened on.
    static func twoProcessTrace(dsn: String) throws -> (traceID: String, port: String) {
        let serveDir = TestSupport.makeTemporaryDirectory("trace-serve"), clientDir = TestSupport.makeTemporaryDirectory("trace-client")
        defer {
            try? FileManager.default.removeItem(atPath: serveDir)
            try? FileManager.default.removeItem(atPath: clientDir)
        }
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: TestSupport.product("faultline-crasher"))
        serve.arguments = ["trace-serve", "--data-dir", serveDir, "--dsn", dsn]
        serve.environment = ["SWIFT_BACKTRACE": "enable=no"]
        let out = Pipe()
        serve.standardOutput = out
        try serve.run()
        defer { if serve.isRunning { serve.terminate() } }
        var printed = Data()
        var portLine: Substring?
        while portLine == nil {  // the start summary comes first, then `port N`
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += chunk
            portLine = String(decoding: printed, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("port ") }
        }
        let port = try XCTUnwrap(portLine.map { String($0.dropFirst(5)) }, "trace-serve printed its port")

        let client = try TestSupport.run(
            TestSupport.product("faultline-crasher"), ["trace-client", "--url", "http://127.0.0.1:\(port)/work?user=1", "--data-dir", clientDir, "--dsn", dsn],
            environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: 90)
        XCTAssertEqual(client.exitCode, 0, client.description)
        XCTAssertTrue(client.stdout.contains("status 200"), client.description)
        XCTAssertEqual(serve.awaitEnd(), ProcessEnd(exitCode: 0, signal: nil))
        let traceID = try XCTUnwrap(client.stdout.split(separator: "\n").first { $0.hasPrefix("trace ") }.map { String($0.dropFirst(6)) })
        return (traceID, port)
    }

    func testASpanCrossingAnHTTPHopBetweenTwoProcessesIsReassembledAsOneTrace() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (traceID, port) = try Self.twoProcessTrace(dsn: server.dsn)

        let trace = try server.getJSON(tracePath(server, traceID))
        let roots = try XCTUnwrap(trace["roots"]?.arrayValue)
        XCTAssertEqual(roots.count, 1, "one tree across both processes: \(trace)")
        let job = roots.first
        XCTAssertEqual(job?["name"]?.stringValue, "client-job")
        let http = child(job, "GET http://127.0.0.1:\(port)/work")
        XCTAssertEqual(http?["op"]?.stringValue, "http.client")
        XCTAssertEqual(http?["data"]?["http.response.status_code"]?.int64Value, 200)
        let handled = child(http, "GET /work?user=1")
        XCTAssertEqual(handled?["transaction"]?.boolValue, true, "the other process's transaction hangs under the client's http.client span")
        XCTAssertEqual(childNames(handled), ["compute"])
    }

    func testACrashInsideASpanLinksItsOccurrenceToThatTrace() throws {
        let server = try TestServer()
        defer { server.stop() }
        let app = TestSupport.makeTemporaryDirectory("span-segv")
        defer { try? FileManager.default.removeItem(atPath: app) }
        let inbound = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let crash = try TestSupport.run(crasher, ["span-segv", "--traceparent", inbound, "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
        XCTAssertEqual(crash.signal, SIGSEGV, crash.description)
        let ids = try XCTUnwrap(crash.stdout.split(separator: "\n").first { $0.hasPrefix("trace ") }).split(separator: " ")
        XCTAssertEqual(String(ids[1]), "4bf92f3577b34da6a3ce929d0e0e4736")
        let crashingSpan = String(ids[2])
        let reports = TestSupport.files(in: app + "/crashes", suffix: ".crash.json")
        let report = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(reports.first, "a crash report"))))
        XCTAssertEqual(report["trace"]?["span_id"]?.stringValue, crashingSpan, "the crash core names the crashing thread's span")

        let flush = try TestSupport.run(crasher, ["flush", "--data-dir", app, "--dsn", server.dsn], environment: env, timeout: 90)
        XCTAssertTrue(flush.stdout.contains("flushed"), flush.description)
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue?.first)
        let occurrence = try XCTUnwrap(try server.getJSON("/api/0/issues/\(issue["id"]?.stringValue ?? "")/events/").arrayValue?.first)
        let eventID = try XCTUnwrap(occurrence["event_id"]?.stringValue)
        let event = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(eventID)/")
        XCTAssertEqual(event["trace"]?["trace_id"]?.stringValue, "4bf92f3577b34da6a3ce929d0e0e4736")
        XCTAssertEqual(event["trace"]?["span_id"]?.stringValue, crashingSpan)
        let url = try XCTUnwrap(event["trace"]?["url"]?.stringValue)

        var trace = JSONValue.null
        for _ in 0..<100 {  // the occurrence's link is written behind the event
            trace = try server.getJSON(url)
            if trace["occurrences"]?.arrayValue?.isEmpty == false { break }
            usleep(20_000)
        }
        XCTAssertEqual(trace["roots"]?[0]?["name"]?.stringValue, "startup", "the transaction sent before the crash")
        XCTAssertEqual(trace["roots"]?[0]?["parent_span_id"]?.stringValue, "00f067aa0ba902b7", "continued from the inbound header")
        XCTAssertEqual(trace["occurrences"]?[0]?["event_id"]?.stringValue, eventID)
        XCTAssertEqual(trace["occurrences"]?[0]?["span_id"]?.stringValue, crashingSpan)
    }

    func testRecentTracesFilterByNameAndStatusAndOldOnesExpire() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        let traces = (0..<3).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }
        let child: JSONValue = [
            "span_id": "1111111111111111", "parent_span_id": "aaaaaaaaaaaaaaaa", "op": "db", "description": "q",
            "start_timestamp": .double(now), "timestamp": .double(now + 0.1), "trace_id": .string(traces[0])
        ]
        let backwards: JSONValue = [
            "span_id": "2222222222222222", "op": "db", "description": "ends before it starts",
            "start_timestamp": .double(now + 1), "timestamp": .double(now)
        ]
        XCTAssertEqual(
            server.sendEnvelope(
                transactionEnvelope(
                    traceID: traces[0], spanID: "aaaaaaaaaaaaaaaa", name: "checkout", status: "ok",
                    start: now, children: [child, backwards])
            ).status, 200)
        XCTAssertEqual(
            server.sendEnvelope(transactionEnvelope(traceID: traces[1], spanID: "bbbbbbbbbbbbbbbb", name: "checkout", status: "internal_error", start: now))
                .status, 200)
        XCTAssertEqual(
            server.sendEnvelope(transactionEnvelope(traceID: traces[2], spanID: "cccccccccccccccc", name: "search", status: "ok", start: now)).status, 200)
        let base = "/api/0/projects/faultline/\(server.projectID)/traces/"
        func ids(_ query: String) throws -> Set<String> { Set(try server.getJSON(base + query).arrayValue?.compactMap { $0["trace_id"]?.stringValue } ?? []) }
        XCTAssertEqual(try ids(""), Set(traces))
        XCTAssertEqual(try ids("?name=checkout"), [traces[0], traces[1]])
        XCTAssertEqual(try ids("?status=internal_error"), [traces[1]])
        XCTAssertEqual(try ids("?name=search&status=ok"), [traces[2]])
        let tree = try server.getJSON(base + traces[0] + "/")
        XCTAssertEqual(tree["span_count"]?.int64Value, 2, "the span that ends before it starts is dropped")
        XCTAssertEqual(tree["roots"]?[0]?["children"]?[0]?["duration_ms"]?.doubleValue ?? 0, 100, accuracy: 0.01)

        let noTrace: JSONValue = ["type": "transaction", "start_timestamp": .double(now), "timestamp": .double(now)]
        let malformed = Envelope(header: [:], items: [Envelope.Item(type: "transaction", payload: noTrace.serialized())]).serialized()
        XCTAssertEqual(server.sendEnvelope(malformed).status, 400, "a transaction without trace ids is refused")

        XCTAssertEqual(try TraceRetention(traces: server.server.stores.traces, days: 7).sweep(now: now + 6 * 86_400), 0, "younger than the retention: kept")
        XCTAssertEqual(try TraceRetention(traces: server.server.stores.traces, days: 7).sweep(now: now + 8 * 86_400), 3)
        XCTAssertEqual(server.get(base + traces[0] + "/").status, 404)
        XCTAssertEqual(try ids(""), [])
    }

    /// Issue 29 item 19: a client can send a transaction whose root names one of its own spans as
    /// parent, so no span is a root. Every span is still in the tree, once, and the one that
    /// starts the cycle's subtree says why it is a root.
    func testSpansWhoseParentsFormACycleAreAllShownOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        let traceID = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        func span(_ id: String, parent: String, _ name: String, _ offset: Double) -> JSONValue {
            [
                "span_id": .string(id), "parent_span_id": .string(parent), "op": "db", "description": .string(name),
                "start_timestamp": .double(now + offset), "timestamp": .double(now + offset + 0.01), "trace_id": .string(traceID)
            ]
        }
        let payload: JSONValue = [
            "type": "transaction", "event_id": .string(TestEvents.eventID()), "transaction": "loop",
            "start_timestamp": .double(now), "timestamp": .double(now + 0.25),
            "contexts": ["trace": ["trace_id": .string(traceID), "span_id": "aaaaaaaaaaaaaaaa", "parent_span_id": "cccccccccccccccc", "op": "task"]],
            "spans": [
                span("bbbbbbbbbbbbbbbb", parent: "aaaaaaaaaaaaaaaa", "b", 0.01), span("cccccccccccccccc", parent: "bbbbbbbbbbbbbbbb", "c", 0.02),
                span("dddddddddddddddd", parent: "aaaaaaaaaaaaaaaa", "d", 0.03)
            ]
        ]
        let envelope = Envelope(header: [:], items: [Envelope.Item(type: "transaction", payload: payload.serialized())]).serialized()
        XCTAssertEqual(server.sendEnvelope(envelope).status, 200)
        let tree = try server.getJSON(tracePath(server, traceID))
        XCTAssertEqual(tree["span_count"]?.int64Value, 4)
        func ids(_ node: JSONValue) -> [String] { [node["span_id"]?.stringValue ?? ""] + (node["children"]?.arrayValue ?? []).flatMap(ids) }
        let roots = tree["roots"]?.arrayValue ?? []
        XCTAssertEqual(roots.flatMap(ids).sorted(), ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc", "dddddddddddddddd"], "\(tree)")
        XCTAssertEqual(roots.count, 1)
        XCTAssertEqual(roots.first?["detached"]?.stringValue, "its parent chain is a cycle")
        XCTAssertEqual(roots.first?["span_id"]?.stringValue, "aaaaaaaaaaaaaaaa", "the earliest span of the cycle starts the subtree")
    }

    /// A parent chain deeper than the tree's depth cap still shows every span once: what hangs
    /// below the cap continues as a root of its own, saying so.
    func testAChainDeeperThanTheDepthCapShowsEverySpanOnce() {
        func id(_ i: Int) -> String { String(format: "%016x", i + 1) }
        var spans: [SpanRecord] = []
        for i in 0..<600 {
            let parent: String? = i == 0 ? nil : id(i - 1)
            spans.append(
                SpanRecord(
                    traceID: String(repeating: "e", count: 32), spanID: id(i), parentSpanID: parent, name: "s\(i)", op: nil, status: nil,
                    start: Double(i), end: Double(i) + 0.5, isTransaction: i == 0, data: nil))
        }
        let tree = TraceAPI.tree(traceID: String(repeating: "e", count: 32), spans: spans, occurrences: [], org: "o", project: "p")
        func ids(_ node: JSONValue) -> [String] { [node["span_id"]?.stringValue ?? ""] + (node["children"]?.arrayValue ?? []).flatMap(ids) }
        let roots = tree["roots"]?.arrayValue ?? []
        XCTAssertEqual(roots.flatMap(ids).count, 600)
        XCTAssertEqual(Set(roots.flatMap(ids)).count, 600)
        XCTAssertNil(roots.first?["detached"])
        XCTAssertEqual(
            roots.dropFirst().compactMap { $0["detached"]?.stringValue }, ["deeper than 256 levels below its root", "deeper than 256 levels below its root"])
    }

    /// Issue 29 item 8: a trace id is the client's to choose, so transactions can pile spans into
    /// one trace without end. A trace keeps at most TraceLimits.maxSpansPerTrace spans (later
    /// transactions are stored, their spans beyond the cap are not), so a read stays bounded.
    func testOneTraceHoldsAtMostTheSpanCap() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        let traceID = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let perTransaction = 999
        let transactions = TraceLimits.maxSpansPerTrace / (perTransaction + 1) + 2
        for t in 0..<transactions {
            let root = String(format: "%08x%08x", t + 1, 0)
            let spans: [JSONValue] = (0..<perTransaction).map { n in
                [
                    "span_id": .string(String(format: "%08x%08x", t + 1, n + 1)), "parent_span_id": .string(root), "op": "db",
                    "description": "q", "start_timestamp": .double(now), "timestamp": .double(now + 0.001)
                ]
            }
            let envelope = transactionEnvelope(traceID: traceID, spanID: root, name: "t\(t)", status: "ok", start: now, children: spans)
            XCTAssertEqual(server.sendEnvelope(envelope).status, 200)
        }
        let tree = try server.getJSON(tracePath(server, traceID))
        XCTAssertEqual(tree["span_count"]?.int64Value, Int64(TraceLimits.maxSpansPerTrace), "\(transactions) transactions of \(perTransaction + 1) spans")
        XCTAssertNil(tree["cut"], "nothing beyond the cap was stored")
        let list = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/traces/?limit=100")
        XCTAssertEqual(list.arrayValue?.count, transactions, "every transaction is still listed")
    }
}
