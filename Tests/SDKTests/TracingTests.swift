// Tracing in the SDK: W3C traceparent parsing, the task-local context across Swift concurrency,
// spans and the transactions they become, ids on logs/breadcrumbs/errors, the crash core's
// per-thread slot, and propagation through a real URLSession request to 127.0.0.1.
import CFaultlineCrash
@testable import Faultline
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineURLSession
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import XCTest

final class BoxedError: Error, @unchecked Sendable { let n: Int; init(_ n: Int) { self.n = n } }

final class TracingTests: XCTestCase {
    static let dataDirectory = TestSupport.makeTemporaryDirectory("tracing")
    static let started: Void = {
        var o = Options(release: "tracing@1", environment: "test", dataDirectory: TracingTests.dataDirectory)
        o.captureCrashes = false
        o.flushAtExit = false
        Faultline.start(o)
    }()

    override func setUp() {
        _ = Self.started
        TraceSampler.rate = 1
    }

    let valid = "00-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-a1b2c3d4e5f60718-01"

    /// Transactions the SDK queued in the outbox, by transaction name.
    func queuedTransactions() throws -> [String: JSONValue] {
        TransactionSender.shared.drain()
        var out: [String: JSONValue] = [:]
        for path in TestSupport.files(in: Self.dataDirectory + "/outbox", suffix: "-transaction.envelope") {
            let env = try Envelope.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
            for item in env.items where item.type == "transaction" {
                let t = try JSONValue.parse(item.payload)
                if let name = t["transaction"]?.stringValue { out[name] = t }
            }
        }
        return out
    }

    // MARK: traceparent

    func testTraceparentOutsideATraceIsEmptyAndInsideNamesTheCurrentSpan() throws {
        XCTAssertEqual(Trace.traceparent(), "")
        Trace.withSpan("outer") { span in
            let header = Trace.traceparent()
            XCTAssertEqual(header, "00-\(span.context.traceID.hex)-\(span.context.spanID.hex)-01")
            XCTAssertEqual(header.count, 55)
            XCTAssertNotNil(header.range(of: "^00-[0-9a-f]{32}-[0-9a-f]{16}-01$", options: .regularExpression))
        }
        XCTAssertEqual(Trace.traceparent(), "")
    }

    func testAValidHeaderIsContinuedWithItsTraceIDAndTracestate() throws {
        Trace.withTraceparent(" \(valid)\t", tracestate: "acme=x9, other=1") {
            XCTAssertEqual(Trace.traceparent(), valid, "surrounding spaces and tabs are accepted (W3C test suite)")
            XCTAssertEqual(Trace.tracestate(), "acme=x9,other=1")
            let child = Trace.startSpan("work")
            XCTAssertEqual(child.context.traceID.hex, "5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24")
            XCTAssertEqual(child.parentSpanID?.hex, "a1b2c3d4e5f60718")
            XCTAssertTrue(child.isTransaction, "the first local span under a remote parent is a transaction")
            child.end()
        }
    }

    func testEveryMalformedTraceparentStartsAFreshTrace() throws {
        let tid = "5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24", sid = "a1b2c3d4e5f60718"
        let malformed: [String: String?] = [
            "version ff": "ff-\(tid)-\(sid)-01",
            "all-zero trace id": "00-00000000000000000000000000000000-\(sid)-01",
            "all-zero parent id": "00-\(tid)-0000000000000000-01",
            "upper-case trace id": "00-\(tid.uppercased())-\(sid)-01",
            "upper-case parent id": "00-\(tid)-\(sid.uppercased())-01",
            "upper-case flags": "00-\(tid)-\(sid)-0A",
            "upper-case version": "0A-\(tid)-\(sid)-01",
            "trace id of 31": "00-\(tid.dropLast())-\(sid)-01",
            "trace id of 33": "00-\(tid)0-\(sid)-01",
            "parent id of 15": "00-\(tid)-\(sid.dropLast())-01",
            "parent id of 17": "00-\(tid)-\(sid)0-01",
            "flags of 1": "00-\(tid)-\(sid)-1",
            "flags of 3": "00-\(tid)-\(sid)-011",
            "dot inside a field": "00-\(tid.dropLast()).-\(sid)-01",
            "version 00 with a trailing dot": "00-\(tid)-\(sid)-01.",
            "version 00 with extra fields": "00-\(tid)-\(sid)-01-extra",
            "future version followed by a dot": "cc-\(tid)-\(sid)-01.what-the-future-will-be-like",
            "future version too short": "cc-\(tid)-\(sid)-0",
            "version not hex": "0g-\(tid)-\(sid)-01",
            "wrong separators": "00_\(tid)_\(sid)_01",
            "empty": "",
            "absent": nil,
            "two headers joined": "\(valid),\(valid)"
        ]
        for (why, header) in malformed {
            XCTAssertNil(header.flatMap { Traceparent(parsing: $0) }, why)
            Trace.withTraceparent(header, tracestate: "acme=x9") {
                let out = Trace.traceparent()
                XCTAssertEqual(out.count, 55, why)
                XCTAssertFalse(out.contains(tid), "\(why): a fresh trace id")
                XCTAssertFalse(out.contains(sid), "\(why): a fresh parent id")
                XCTAssertNil(Trace.tracestate(), "\(why): tracestate is dropped on restart")
            }
        }
    }

    func testAFreshTracesRootHasNoParentAndAContinuedTraceKeepsItsCaller() throws {
        for (why, header) in [("absent", nil), ("malformed", "garbage"), ("all-zero parent id", "00-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-0000000000000000-01")] {
            Trace.withTraceparent(header) { Trace.withSpan("fresh root \(why)") { _ in } }
            let root = try XCTUnwrap(try queuedTransactions()["fresh root \(why)"], why)
            XCTAssertNotNil(root["contexts"]?["trace"]?["span_id"]?.stringValue, why)
            XCTAssertNil(root["contexts"]?["trace"]?["parent_span_id"], "\(why): a new trace's root has no parent")
        }
        Trace.withTraceparent(valid) { Trace.withSpan("continued root") { _ in } }
        let continued = try XCTUnwrap(try queuedTransactions()["continued root"])
        XCTAssertEqual(continued["contexts"]?["trace"]?["parent_span_id"]?.stringValue, "a1b2c3d4e5f60718", "the caller's span stays the parent")
    }

    func testAFutureVersionIsReadByItsFirstFourFieldsAndSentAsVersion00() throws {
        let p = try XCTUnwrap(Traceparent(parsing: "cc-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-a1b2c3d4e5f60718-01-what-the-future-will-be-like"))
        XCTAssertEqual(p.header, valid)
        // Unknown flag bits are never forwarded.
        XCTAssertEqual(Traceparent(parsing: "00-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-a1b2c3d4e5f60718-ff")?.header.suffix(3), "-03")
    }

    func testAnInvalidTracestateIsDroppedWithoutAffectingTraceparent() {
        Trace.withTraceparent(valid, tracestate: "Bad Key=1") {
            XCTAssertEqual(Trace.traceparent(), valid)
            XCTAssertNil(Trace.tracestate())
        }
        let tooMany = (0...32).map { "k\($0)=v" }.joined(separator: ",")
        Trace.withTraceparent(valid, tracestate: tooMany) { XCTAssertNil(Trace.tracestate(), "33 members: discarded") }
    }

    // MARK: Sampling

    func testTheInboundSampledFlagIsHonouredAndTheRateDecidesFreshTraces() throws {
        let unsampled = "00-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-a1b2c3d4e5f60718-00"
        Trace.withTraceparent(unsampled) {
            Trace.withSpan("inbound-unsampled") { span in
                XCTAssertFalse(span.context.isSampled)
                XCTAssertTrue(Trace.traceparent().hasSuffix("-00"))
            }
        }
        TraceSampler.rate = 0
        Trace.withTraceparent(valid) { Trace.withSpan("inbound-sampled-despite-rate-0") { XCTAssertTrue($0.context.isSampled) } }
        Trace.withSpan("fresh-at-rate-0") { _ in XCTAssertTrue(Trace.traceparent().hasSuffix("-00")) }
        TraceSampler.rate = 1
        let t = try queuedTransactions()
        XCTAssertNil(t["inbound-unsampled"], "an unsampled trace is not sent")
        XCTAssertNil(t["fresh-at-rate-0"])
        XCTAssertNotNil(t["inbound-sampled-despite-rate-0"], "the caller's decision wins over the local rate")
    }

    // MARK: Context across concurrency

    func testContextFollowsAwaitAsyncLetAndTaskGroupsButNotDetachedTasks() async throws {
        func currentSpanID() async -> String? {
            await Task.yield()
            return Trace.currentContext?.spanID.hex
        }
        try await Trace.withSpan("async-root") { span in
            let id = span.context.spanID.hex
            try await Task.sleep(nanoseconds: 1_000_000)
            XCTAssertEqual(Trace.currentContext?.spanID.hex, id, "after await")
            async let a = currentSpanID()
            let fromAsyncLet = await a
            XCTAssertEqual(fromAsyncLet, id, "async let inherits")
            let fromGroup = await withTaskGroup(of: String?.self) { g in
                for _ in 0..<4 { g.addTask { await currentSpanID() } }
                return await g.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(fromGroup, Array(repeating: id, count: 4), "task group children inherit")
            let fromUnstructured = await Task { await currentSpanID() }.value
            XCTAssertEqual(fromUnstructured, id, "Task {} copies task-locals")
            let fromDetached = await Task.detached { await currentSpanID() }.value
            XCTAssertNil(fromDetached, "documented: a detached task starts outside the trace")
            let carried = span.context
            let fromCarried = await Task.detached { await Trace.withContext(carried) { await currentSpanID() } }.value
            XCTAssertEqual(fromCarried, id, "a detached task carries the context with withContext")
            let fromThread: String? = await withCheckedContinuation { c in Thread { c.resume(returning: Trace.currentContext?.spanID.hex) }.start() }
            XCTAssertNil(fromThread, "documented: a plain thread sees no span")
            // Children started in child tasks nest under this span.
            await withTaskGroup(of: Void.self) { g in
                for i in 0..<3 { g.addTask { await Trace.withSpan("child \(i)") { _ in await Task.yield() } } }
            }
        }
        let t = try XCTUnwrap(try queuedTransactions()["async-root"])
        let rootID = try XCTUnwrap(t["contexts"]?["trace"]?["span_id"]?.stringValue)
        let spans = try XCTUnwrap(t["spans"]?.arrayValue)
        XCTAssertEqual(Set(spans.compactMap { $0["description"]?.stringValue }), ["child 0", "child 1", "child 2"])
        XCTAssertTrue(spans.allSatisfy { $0["parent_span_id"]?.stringValue == rootID })
    }

    // MARK: Spans and transactions

    func testNestedSpansBecomeOneTransactionWithChildSpans() throws {
        Trace.withSpan("checkout", operation: "http.server", attributes: ["cart": 3]) { root in
            root.setAttribute("user.tier", "gold")
            Trace.withSpan("load cart", operation: "db.query") { _ in
                Trace.withSpan("parse", operation: "function") { $0.setStatus(.dataLoss) }
            }
            let manual = Trace.startSpan("manual", operation: "cache.get")
            manual.end()
            manual.end(error: BoxedError(1))  // only the first end counts
        }
        let t = try XCTUnwrap(try queuedTransactions()["checkout"])
        XCTAssertEqual(t["type"]?.stringValue, "transaction")
        XCTAssertEqual(t["contexts"]?["trace"]?["op"]?.stringValue, "http.server")
        XCTAssertEqual(t["contexts"]?["trace"]?["status"]?.stringValue, "ok")
        XCTAssertEqual(t["contexts"]?["trace"]?["data"]?["user.tier"]?.stringValue, "gold")
        XCTAssertEqual(t["contexts"]?["trace"]?["data"]?["cart"]?.int64Value, 3)
        let spans = try XCTUnwrap(t["spans"]?.arrayValue)
        func span(_ d: String) -> JSONValue? { spans.first { $0["description"]?.stringValue == d } }
        let root = t["contexts"]?["trace"]?["span_id"]?.stringValue
        XCTAssertEqual(span("load cart")?["parent_span_id"]?.stringValue, root)
        XCTAssertEqual(span("parse")?["parent_span_id"]?.stringValue, span("load cart")?["span_id"]?.stringValue)
        XCTAssertEqual(span("parse")?["status"]?.stringValue, "data_loss")
        XCTAssertEqual(span("manual")?["status"]?.stringValue, "ok")
        for s in spans {
            XCTAssertLessThanOrEqual(try XCTUnwrap(s["start_timestamp"]?.doubleValue), try XCTUnwrap(s["timestamp"]?.doubleValue))
        }
    }

    func testAThrownErrorEndsTheSpanFailedAndIsRethrownUnchanged() async throws {
        let thrown = BoxedError(7)
        do {
            try Trace.withSpan("sync-fails") { _ in throw thrown }
            XCTFail("rethrows")
        } catch let e as BoxedError { XCTAssertTrue(e === thrown) }
        do {
            try await Trace.withSpan("async-fails") { _ in
                try await Task.sleep(nanoseconds: 1000); throw thrown
            }
            XCTFail("rethrows")
        } catch let e as BoxedError { XCTAssertTrue(e === thrown) }
        let t = try queuedTransactions()
        for name in ["sync-fails", "async-fails"] {
            let trace = t[name]?["contexts"]?["trace"]
            XCTAssertEqual(trace?["status"]?.stringValue, "internal_error", name)
            XCTAssertEqual(trace?["data"]?["error.type"]?.stringValue, String(reflecting: BoxedError.self), name)
        }
    }

    // MARK: Ids everywhere

    func testTheCrashSlotNamesTheThreadsSpanAndItsParentAfterItEnds() throws {
        var h: UInt64 = 0, l: UInt64 = 0, s: UInt64 = 0
        faultline_trace_slot_clear()
        XCTAssertEqual(faultline_trace_slot_get(&h, &l, &s), -1, "no span: nothing recorded")
        Trace.withSpan("outer") { outer in
            XCTAssertEqual(faultline_trace_slot_get(&h, &l, &s), 0)
            XCTAssertEqual(s, outer.context.spanID.value)
            XCTAssertEqual(TraceID(high: h, low: l), outer.context.traceID)
            let inner = Trace.startSpan("inner")
            faultline_trace_slot_get(&h, &l, &s)
            XCTAssertEqual(s, inner.context.spanID.value, "the newest span on this thread")
            Log.debug("inside the manual span")
            faultline_trace_slot_get(&h, &l, &s)
            XCTAssertEqual(s, inner.context.spanID.value, "a log line in the same trace keeps the more specific manual span")
            inner.end()
            faultline_trace_slot_get(&h, &l, &s)
            XCTAssertEqual(s, outer.context.spanID.value, "back to the parent")
        }
        XCTAssertEqual(faultline_trace_slot_get(&h, &l, &s), -1, "cleared when the last span ends")
        // A thread whose slot names another trace (or none) takes the current span at its next log line.
        let other = Trace.startSpan("elsewhere")
        Trace.withTraceparent(valid) {
            Log.debug("after a hop")
            faultline_trace_slot_get(&h, &l, &s)
            XCTAssertEqual(s, 0xa1b2c3d4e5f60718, "the log line re-pointed this thread at the current context")
        }
        other.end()
    }

    func testLogsBreadcrumbsAndCapturedErrorsCarryTheCurrentIDs() throws {
        try Trace.withSpan("ids") { span in
            Log.warning("inside a span")
            let crumb = try XCTUnwrap(BreadcrumbStore.shared.snapshot.last)
            XCTAssertEqual(crumb["data"]?["trace_id"]?.stringValue, span.context.traceID.hex)
            XCTAssertEqual(crumb["data"]?["span_id"]?.stringValue, span.context.spanID.hex)
            let logged = LogEvent(level: .info, message: "x", traceID: span.context.traceID.hex, spanID: span.context.spanID.hex)
            let payload = try JSONValue.parse(LogBuffer.itemPayload([logged], traceID: "process", context: nil))
            XCTAssertEqual(payload["items"]?[0]?["trace_id"]?.stringValue, span.context.traceID.hex)
            XCTAssertEqual(payload["items"]?[0]?["span_id"]?.stringValue, span.context.spanID.hex)

            let id = try XCTUnwrap(Faultline.capture(BoxedError(3)))
            let path = try XCTUnwrap(TestSupport.files(in: Self.dataDirectory + "/outbox", suffix: "\(id).envelope").first)
            let env = try Envelope.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
            let event = try JSONValue.parse(try XCTUnwrap(env.items.first).payload)
            XCTAssertEqual(event["contexts"]?["trace"]?["trace_id"]?.stringValue, span.context.traceID.hex)
            XCTAssertEqual(event["contexts"]?["trace"]?["span_id"]?.stringValue, span.context.spanID.hex)
        }
    }

    func testLogLinesFillTheirIDsFromTheCurrentSpan() throws {
        let sink = InMemoryLogger()
        Log.bootstrap(sink)
        defer { Log.bootstrap(NullLogger()) }
        Log.info("outside")
        let id = Trace.withSpan("log-ids") { span in
            Log.info("inside"); return span.context.spanID.hex
        }
        let events = sink.events
        XCTAssertNil(events.first { $0.message == "outside" }?.spanID)
        XCTAssertEqual(events.first { $0.message == "inside" }?.spanID, id)
    }

    // MARK: URLSession

    func testURLSessionRequestsInsideATraceCarryTraceparentAndBecomeHTTPClientSpans() async throws {
        let server = try ScriptedHTTPServer { r in
            .status(r.path.hasPrefix("/missing") ? 404 : 200, body: (r.headers["traceparent"] ?? "none") + " " + (r.headers["tracestate"] ?? "none"))
        }
        defer { server.stop() }
        let config = URLSessionConfiguration.ephemeral
        Trace.propagate(on: config)
        let session = URLSession(configuration: config)
        let base = "http://127.0.0.1:\(server.port)"

        let (outside, _) = try await session.data(from: URL(string: base + "/outside")!)
        XCTAssertEqual(String(decoding: outside, as: UTF8.self), "none none", "no trace, no header")

        try await Trace.withTraceparent(valid, tracestate: "acme=x9") {
            try await Trace.withSpan("client-root") { root in
                let (body, _) = try await session.data(from: URL(string: base + "/echo?secret=1")!)
                let echoed = String(decoding: body, as: UTF8.self).split(separator: " ")
                let p = try XCTUnwrap(Traceparent(parsing: String(echoed[0])))
                XCTAssertEqual(p.traceID, root.context.traceID)
                XCTAssertNotEqual(p.parentID, root.context.spanID, "the parent is the http.client span")
                XCTAssertEqual(echoed[1], "acme=x9", "tracestate forwarded unchanged")

                var preset = URLRequest(url: URL(string: base + "/preset")!)
                preset.setValue("00-11111111111111111111111111111111-2222222222222222-01", forHTTPHeaderField: "traceparent")
                let (kept, _) = try await session.data(for: preset)
                XCTAssertTrue(
                    String(decoding: kept, as: UTF8.self).hasPrefix("00-11111111111111111111111111111111-2222222222222222-01"),
                    "an existing header is never overwritten")
                let (_, missing) = try await session.data(from: URL(string: base + "/missing")!)
                XCTAssertEqual((missing as? HTTPURLResponse)?.statusCode, 404)
            }
        }
        let t = try XCTUnwrap(try queuedTransactions()["client-root"])
        let spans = try XCTUnwrap(t["spans"]?.arrayValue).filter { $0["op"]?.stringValue == "http.client" }
        XCTAssertEqual(spans.count, 3)
        let echo = try XCTUnwrap(spans.first { $0["description"]?.stringValue?.hasSuffix("/echo") == true })
        XCTAssertEqual(echo["description"]?.stringValue, "GET \(base)/echo", "the URL without its query")
        XCTAssertEqual(echo["data"]?["http.response.status_code"]?.int64Value, 200)
        let missing = try XCTUnwrap(spans.first { $0["description"]?.stringValue?.hasSuffix("/missing") == true })
        XCTAssertEqual(missing["status"]?.stringValue, "not_found")
        XCTAssertEqual(
            server.requests.first { $0.path.hasPrefix("/echo") }?.headers["traceparent"]?.contains(echo["span_id"]?.stringValue ?? "?"), true,
            "the header names the http.client span")
    }
}
