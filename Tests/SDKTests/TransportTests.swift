// The transport against a real HTTP server on 127.0.0.1: retries, back-off, rate limits, 413
// halving, drops and their counters, ordering, and nothing lost across a restart.
@testable import Faultline
@testable import FaultlineCrashPickup
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

/// A clock that never sleeps: it records the sleeps and advances its own time.
final class TestClock: SDKClock, @unchecked Sendable {
    private let state = Mutex<(now: Double, sleeps: [Double])>((1_000_000, []))
    func now() -> Double { state.withLock { $0.now } }
    func sleep(seconds: Double) {
        state.withLock {
            $0.now += seconds; $0.sleeps.append(seconds)
        }
    }
    func advance(_ s: Double) { state.withLock { $0.now += s } }
    var sleeps: [Double] { state.withLock { $0.sleeps } }
}

final class TransportTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("outbox") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func event(_ n: Int) -> Envelope {
        let id = String(format: "%032x", n)
        let payload: JSONValue = ["event_id": .string(id), "message": .string("event \(n)")]
        return Envelope(header: ["event_id": .string(id)], items: [Envelope.Item(type: "event", payload: payload.serialized())])
    }

    func make(_ server: ScriptedHTTPServer, clock: TestClock = TestClock(), cap: Int = 1_000_000) throws -> (Outbox, Flusher, TestClock) {
        let outbox = try Outbox(directory: dir, byteCap: cap)
        let flusher = Flusher(outbox: outbox, transport: HTTPTransport(dsn: try DSN(parsing: server.dsn()), timeout: 3), clock: clock)
        return (outbox, flusher, clock)
    }

    func receivedEventIDs(_ server: ScriptedHTTPServer) -> [String] {
        server.requests.compactMap { (try? Envelope.parse($0.body))?.eventID }
    }

    func testSendsGzippedEnvelopesOldestFirstWithSentryAuth() throws {
        let server = try ScriptedHTTPServer()
        let (outbox, flusher, _) = try make(server)
        for n in 0..<5 { outbox.enqueue(event(n)) }
        let s = flusher.flushOnce()
        XCTAssertEqual(s.sent, 5)
        XCTAssertTrue(outbox.pending().isEmpty)
        XCTAssertEqual(receivedEventIDs(server), (0..<5).map { String(format: "%032x", $0) })
        let first = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(first.path, "/api/1/envelope/")
        XCTAssertEqual(first.headers["content-encoding"], "gzip")
        XCTAssertEqual(first.headers["content-type"], "application/x-sentry-envelope")
        XCTAssertTrue(first.headers["x-sentry-auth"]?.contains("sentry_key=0123456789abcdef0123456789abcdef") == true)
        XCTAssertNotNil(try Envelope.parse(first.body).header["sent_at"]?.stringValue, "sent_at is written when sending")
    }

    func testRateLimitKeepsTheEnvelopeAndWaitsForRetryAfter() throws {
        let server = try ScriptedHTTPServer { _ in .status(429, headers: ["Retry-After": "30"]) }
        let (outbox, flusher, clock) = try make(server)
        outbox.enqueue(event(1))
        XCTAssertEqual(flusher.flushOnce().stoppedBy, "rate limit")
        XCTAssertEqual(outbox.pending().count, 1)
        server.setScript { _ in .status(200) }
        clock.advance(10)
        XCTAssertEqual(flusher.flushOnce().sent, 0, "still inside Retry-After")
        XCTAssertEqual(server.requests.count, 1, "no request while rate limited")
        clock.advance(21)
        XCTAssertEqual(flusher.flushOnce().sent, 1)
        XCTAssertEqual(clock.sleeps, [], "rate limits are waited out between flushes, not by sleeping")
    }

    func testSentryRateLimitHeaderLimitsOnlyItsCategory() throws {
        let server = try ScriptedHTTPServer { _ in .status(200, headers: ["X-Sentry-Rate-Limits": "60:error:key"]) }
        let (outbox, flusher, _) = try make(server)
        outbox.enqueue(event(1))
        outbox.enqueue(event(2))
        let s = flusher.flushOnce()
        XCTAssertEqual(s.sent, 1, "the first answer limits the error category")
        XCTAssertEqual(s.stoppedBy, "rate limit")
        XCTAssertEqual(outbox.pending().count, 1)
    }

    func testAnEndlessOrAbsurdRateLimitIsCappedAtTheLongestLimit() throws {
        let answers: [(why: String, headers: [String: String])] = [
            ("Retry-After: inf", ["Retry-After": "inf"]),
            ("Retry-After: 1e9", ["Retry-After": "1e9"]),
            ("Retry-After: nan", ["Retry-After": "nan"]),
            ("X-Sentry-Rate-Limits: inf", ["X-Sentry-Rate-Limits": "inf::organization"]),
            ("X-Sentry-Rate-Limits: 1e9 on errors", ["X-Sentry-Rate-Limits": "1e9:error:key"])
        ]
        for answer in answers {
            try? FileManager.default.removeItem(atPath: dir)
            let server = try ScriptedHTTPServer { _ in .status(429, headers: answer.headers) }
            let (outbox, flusher, clock) = try make(server)
            outbox.enqueue(event(1))
            XCTAssertEqual(flusher.flushOnce().stoppedBy, "rate limit", answer.why)
            server.setScript { _ in .status(200) }
            clock.advance(RateLimits.longestLimit + 1)
            XCTAssertEqual(flusher.flushOnce().sent, 1, "\(answer.why): sending resumes once the longest limit has passed")
        }
    }

    func testALimitOnLogsDoesNotHoldBackACrashEventBehindIt() throws {
        let server = try ScriptedHTTPServer { req in
            let type = (try? Envelope.parse(req.body))?.items.first?.type
            return type == "log" ? .status(429, headers: ["X-Sentry-Rate-Limits": "60:log_item:organization", "Retry-After": "60"]) : .status(200)
        }
        let (outbox, flusher, _) = try make(server)
        let logs: JSONValue = ["items": [["body": "x"]]]
        outbox.enqueue(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: logs.serialized())]))
        outbox.enqueue(event(1))
        outbox.enqueue(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: logs.serialized())]))
        let s = flusher.flushOnce()
        XCTAssertEqual(s.sent, 1, "the event behind the limited log still goes out")
        XCTAssertEqual(receivedEventIDs(server), [String(format: "%032x", 1)])
        XCTAssertEqual(outbox.pending().count, 2, "limited logs wait on disk")
        XCTAssertEqual(server.requests.count, 2, "the second log is not even tried while log_item is limited")
    }

    /// A session's opening update outlives a burst of logs that overflows the outbox: it was
    /// evicted with the logs (both were "noevent"), and the server never counted the session.
    func testEvictionForSpaceKeepsSessionUpdates() throws {
        let outbox = try Outbox(directory: dir, byteCap: 1_500)
        let session: JSONValue = ["sid": "5f2c5b1e-9d3c-4f43-9e66-5a3a6e9d2d10", "init": true, "status": "ok", "attrs": ["release": "a@1"]]
        outbox.enqueue(Envelope(header: [:], items: [Envelope.Item(type: "session", payload: session.serialized())]))
        let logs: JSONValue = ["items": .array((0..<20).map { ["body": .string("line \($0)")] })]
        for _ in 0..<10 { outbox.enqueue(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: logs.serialized())])) }
        XCTAssertGreaterThan(outbox.droppedCounts[.queueOverflow] ?? 0, 0, "logs were evicted")
        XCTAssertTrue(outbox.pending().contains { $0.path.hasSuffix("-session.envelope") }, "the session's opening update survives")
        XCTAssertTrue(outbox.holdsSessionStart("5f2c5b1e-9d3c-4f43-9e66-5a3a6e9d2d10"))
    }

    func testEvictionForSpaceDropsLogsBeforeEvents() throws {
        let outbox = try Outbox(directory: dir, byteCap: 1_000)
        outbox.enqueue(event(1))
        let logs: JSONValue = ["items": .array((0..<20).map { ["body": .string("line \($0)")] })]
        for _ in 0..<5 { outbox.enqueue(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: logs.serialized())])) }
        XCTAssertTrue(
            outbox.pending().contains { $0.path.hasSuffix(String(format: "%032x", 1) + ".envelope") },
            "the oldest envelope, an event, survives while logs are evicted")
        XCTAssertGreaterThan(outbox.droppedCounts[.queueOverflow] ?? 0, 0)
    }

    /// The report says what was lost, as Sentry's client reports count it: an evicted log
    /// envelope is its lines (`log_item`) and its bytes (`log_byte`), not one `default`.
    func testAnEvictedLogEnvelopeIsReportedAsItsLinesAndBytes() throws {
        let server = try ScriptedHTTPServer()
        let (outbox, flusher, _) = try make(server, cap: 1_500)
        let logs: JSONValue = ["items": .array((0..<20).map { ["body": .string("line \($0)")] })]
        let item = Envelope.Item(type: "log", payload: logs.serialized(), extra: ["item_count": 20])
        for _ in 0..<4 { outbox.enqueue(Envelope(header: [:], items: [item])) }
        let evicted = try XCTUnwrap(outbox.droppedCounts[.queueOverflow])
        XCTAssertGreaterThan(evicted, 0)
        _ = flusher.flushOnce()
        let reports: [JSONValue] = server.requests.compactMap { try? Envelope.parse($0.body) }
            .filter { $0.items.first?.type == "client_report" }.compactMap { try? JSONValue.parse($0.items[0].payload) }
        var quantity: [String: Int64] = [:]
        for d in reports.flatMap({ $0["discarded_events"]?.arrayValue ?? [] }) {
            XCTAssertEqual(d["reason"]?.stringValue, "queue_overflow")
            quantity[d["category"]?.stringValue ?? "?", default: 0] += d["quantity"]?.int64Value ?? 0
        }
        XCTAssertEqual(quantity["log_item"], Int64(evicted * 20), "each evicted envelope's 20 lines")
        XCTAssertEqual(quantity["log_byte"], Int64(evicted * item.payload.count))
        XCTAssertNil(quantity["default"], "\(quantity)")
    }

    /// A transaction is one transaction and its spans (its root span among them); an attachment
    /// its bytes; a report of losses is never itself counted.
    func testEachItemTypeIsItsSentryCategory() throws {
        let transaction: JSONValue = ["type": "transaction", "spans": [["span_id": "a"], ["span_id": "b"]]]
        let envelope = Envelope(
            header: [:],
            items: [
                Envelope.Item(type: "transaction", payload: transaction.serialized()),
                Envelope.Item(type: "attachment", payload: Data(repeating: 1, count: 300)),
                Envelope.Item(type: "session", payload: Data("{}".utf8)),
                Envelope.Item(type: "client_report", payload: Data("{}".utf8))
            ])
        let outbox = try Outbox(directory: dir)
        outbox.countDrop(.rejectedByServer, envelope: envelope)
        let losses = outbox.takeUnreportedLosses()
        func n(_ category: String) -> Int? { losses[Loss(reason: "send_error", category: category)] }
        XCTAssertEqual(n("transaction"), 1)
        XCTAssertEqual(n("span"), 3)
        XCTAssertEqual(n("attachment"), 300)
        XCTAssertEqual(n("session"), 1)
        XCTAssertEqual(losses.count, 4, "\(losses)")
        XCTAssertEqual(outbox.droppedCounts[.rejectedByServer], 1, "the local count is of envelopes")
    }

    /// A count written by an earlier version (by reason, no category) is still reported.
    func testLossesSavedByAnEarlierVersionAreReported() throws {
        try Data(#"{"rejected_by_server":3}"#.utf8).write(to: URL(fileURLWithPath: dir + "/.unreported-drops.json"))
        let outbox = try Outbox(directory: dir)
        XCTAssertEqual(outbox.takeUnreportedLosses(), [Loss(reason: "send_error", category: "default"): 3])
    }

    func testServerErrorsBackOffExponentiallyFromHalfASecondToTenSeconds() throws {
        let server = try ScriptedHTTPServer { _ in .status(500) }
        let (outbox, flusher, clock) = try make(server)
        outbox.enqueue(event(1))
        XCTAssertEqual(flusher.flushOnce().stoppedBy, "retries exhausted")
        XCTAssertEqual(server.requests.count, 3, "three attempts per flush")
        XCTAssertEqual(clock.sleeps, [0.5, 1.0])
        XCTAssertEqual(flusher.flushOnce().stoppedBy, "backoff", "next flush waits out the back-off")
        XCTAssertEqual(server.requests.count, 3)
        clock.advance(2.0)
        _ = flusher.flushOnce()
        XCTAssertEqual(clock.sleeps, [0.5, 1.0, 4.0, 8.0])
        clock.advance(10)
        _ = flusher.flushOnce()
        XCTAssertEqual(clock.sleeps, [0.5, 1.0, 4.0, 8.0, 10.0, 10.0], "capped at 10 s")
        XCTAssertEqual(outbox.pending().count, 1, "a failing envelope stays on disk")
        server.setScript { _ in .status(200) }
        clock.advance(10)
        XCTAssertEqual(flusher.flushOnce().sent, 1)
    }

    func testUnansweredRequestIsRetriedNotLost() throws {
        let server = try ScriptedHTTPServer { _ in .noAnswer }
        let (outbox, flusher, _) = try make(server)
        outbox.enqueue(event(1))
        XCTAssertEqual(flusher.flushOnce().stoppedBy, "retries exhausted")
        XCTAssertEqual(outbox.pending().count, 1)
    }

    func testTooLargeHalvesALogBatchUntilItFits() throws {
        let server = try ScriptedHTTPServer { req in
            let env = try? Envelope.parse(req.body)
            let count = env?.items.first?.header["item_count"]?.int64Value ?? 0
            return count > 25 ? .status(413) : .status(200)
        }
        let (outbox, flusher, _) = try make(server)
        let logs: [JSONValue] = (0..<100).map { ["body": .string("line \($0)")] }
        outbox.enqueue(
            Envelope(
                header: [:],
                items: [
                    Envelope.Item(
                        type: "log", payload: JSONValue.object(["items": .array(logs)]).serialized(),
                        extra: ["item_count": 100])
                ]))
        _ = flusher.flushOnce()
        let delivered = server.requests.filter { _ in true }.compactMap { try? Envelope.parse($0.body) }
            .filter { ($0.items.first?.header["item_count"]?.int64Value ?? 0) <= 25 }
            .flatMap { (try? JSONValue.parse($0.items[0].payload))?["items"]?.arrayValue ?? [] }
            .compactMap { $0["body"]?.stringValue }
        XCTAssertEqual(delivered, (0..<100).map { "line \($0)" }, "every line delivered once, in order")
        XCTAssertTrue(outbox.pending().isEmpty)
    }

    func testClientErrorDropsTheEnvelopeCountsItAndReportsTheDrop() throws {
        let server = try ScriptedHTTPServer { _ in .status(400, body: "{\"detail\":\"bad\"}") }
        let (outbox, flusher, _) = try make(server)
        outbox.enqueue(event(1))
        XCTAssertEqual(flusher.flushOnce().dropped, 1)
        XCTAssertEqual(outbox.droppedCounts[.rejectedByServer], 1)
        server.setScript { _ in .status(200) }
        _ = flusher.flushOnce()
        let report = server.requests.last.flatMap { try? Envelope.parse($0.body) }
        XCTAssertEqual(report?.items.first?.type, "client_report")
        let discarded = report.flatMap { try? JSONValue.parse($0.items[0].payload) }?["discarded_events"]?[0]
        XCTAssertEqual(discarded?["reason"]?.stringValue, "send_error", "Sentry's reason for what the server refused")
        XCTAssertEqual(discarded?["category"]?.stringValue, "error", "an event is an error")
        XCTAssertEqual(discarded?["quantity"]?.int64Value, 1)
        XCTAssertEqual(outbox.droppedCounts[.rejectedByServer], 1, "totals are kept after reporting")
    }

    func testDropsCountedBeforeAKillAreReportedByTheNextRun() throws {
        let first = try Outbox(directory: dir, byteCap: 600)
        for n in 0..<10 { first.enqueue(event(n)) }
        let lost = try XCTUnwrap(first.droppedCounts[.queueOverflow])
        // A new Outbox over the same directory is the next process after kill -9.
        let server = try ScriptedHTTPServer()
        let (_, flusher, _) = try make(server, cap: 600)
        _ = flusher.flushOnce()
        let envelopes: [Envelope] = server.requests.compactMap { try? Envelope.parse($0.body) }
        let reports: [JSONValue] = envelopes.filter { $0.items.first?.type == "client_report" }
            .compactMap { try? JSONValue.parse($0.items[0].payload) }
        let discarded: [JSONValue] = reports.flatMap { $0["discarded_events"]?.arrayValue ?? [] }
        var reported: Int64 = 0
        for d in discarded where d["reason"]?.stringValue == "queue_overflow" { reported += d["quantity"]?.int64Value ?? 0 }
        XCTAssertGreaterThanOrEqual(Int(reported), lost)
    }

    func testByteCapDropsOldestAndCounts() throws {
        let server = try ScriptedHTTPServer()
        let (outbox, flusher, _) = try make(server, cap: 2_000)
        for n in 0..<20 { outbox.enqueue(event(n)) }
        let kept = outbox.pending().count
        XCTAssertLessThan(kept, 20)
        XCTAssertEqual(outbox.droppedCounts[.queueOverflow], 20 - kept)
        _ = flusher.flushOnce()
        // Sending the client report may push one more event out; either way every event is
        // either delivered or counted, and the delivered ones are the newest, in order.
        let ids = receivedEventIDs(server)
        XCTAssertEqual(ids, (20 - ids.count..<20).map { String(format: "%032x", $0) }, "the newest survive, in order")
        XCTAssertEqual(ids.count + (outbox.droppedCounts[.queueOverflow] ?? 0), 20, "every loss is counted")
    }

    func testNothingQueuedIsLostAcrossARestartWhileTheServerIsDown() throws {
        let down = try ScriptedHTTPServer()
        let port = down.port
        down.stop()  // connection refused from now on
        let outbox1 = try Outbox(directory: dir)
        let flusher1 = Flusher(outbox: outbox1, transport: HTTPTransport(dsn: try DSN(parsing: "http://k@127.0.0.1:\(port)/1"), timeout: 2), clock: TestClock())
        for n in 0..<5 { outbox1.enqueue(event(n)) }
        XCTAssertEqual(flusher1.flushOnce().stoppedBy, "retries exhausted")

        // "Restart": new objects over the same directory, server up.
        let server = try ScriptedHTTPServer()
        let (_, flusher2, _) = try make(server)
        XCTAssertEqual(flusher2.flushOnce().sent, 5)
        XCTAssertEqual(receivedEventIDs(server), (0..<5).map { String(format: "%032x", $0) })
    }

    func testUnwritableQueueDirectoryCountsTheLossAndKeepsGoing() throws {
        let outbox = try Outbox(directory: dir)
        try FileManager.default.removeItem(atPath: dir)
        FileManager.default.createFile(atPath: dir, contents: Data("not a directory".utf8))  // even root cannot write into a file
        XCTAssertFalse(outbox.enqueue(event(1)))
        XCTAssertEqual(outbox.droppedCounts[.diskWriteFailed], 1)
        try FileManager.default.removeItem(atPath: dir)
    }

    func testAnOutboxWhoseDirectoryWasDeletedMakesItAgainAndLosesNothing() throws {
        let data = dir + "/data"
        let outbox = try Outbox(directory: data + "/outbox")
        XCTAssertTrue(outbox.enqueue(event(1)))
        try FileManager.default.removeItem(atPath: data)  // the app's data directory, deleted while it runs
        XCTAssertTrue(outbox.enqueue(event(2)), "the directory and its parents are made again")
        XCTAssertTrue(outbox.enqueue(event(3)))
        XCTAssertEqual(outbox.droppedCounts, [:], "nothing was lost")
        XCTAssertEqual(TestSupport.files(in: data + "/outbox", suffix: ".envelope").count, 2)
    }

    func testTemporariesOfWritersThatAreGoneAreSweptWhenTheOutboxOpens() throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        let name = "00000000000000000001-0000000001-noevent.envelope"
        let goneWriter = dir + "/.\(name).\(exited.processIdentifier).1.9f2c.tmp"
        let liveWriter = dir + "/.\(name).\(getpid()).2.7a1b.tmp"
        let liveButAncient = dir + "/.\(name).\(getpid()).3.5e4d.tmp"
        for path in [goneWriter, liveWriter, liveButAncient] { FileManager.default.createFile(atPath: path, contents: Data("part".utf8)) }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -2 * 86_400)], ofItemAtPath: liveButAncient)
        let outbox = try Outbox(directory: dir)
        XCTAssertFalse(FileManager.default.fileExists(atPath: goneWriter), "its writer was killed mid-write: it can never be completed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: liveButAncient), "far older than any write takes")
        XCTAssertTrue(FileManager.default.fileExists(atPath: liveWriter), "a live process may still rename it into place")
        XCTAssertTrue(outbox.pending().isEmpty)
    }

    func testFullDiskCountsEachLostEnvelopeAndKeepsWhatFits() throws {
        // A real full file system: a 64 KiB tmpfs (needs root, as in CI; skipped otherwise).
        let mountPoint = dir + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard (try? TestSupport.shell("mount -t tmpfs -o size=64k faultline-test '\(mountPoint)'")) != nil else {
            throw XCTSkip("cannot mount a tmpfs here (not root?)")
        }
        defer { _ = try? TestSupport.shell("umount '\(mountPoint)'") }
        let outbox = try Outbox(directory: mountPoint + "/outbox", byteCap: 10_000_000)
        let big = Envelope(header: [:], items: [Envelope.Item(type: "event", payload: Data(repeating: 0x61, count: 8_000))])
        var written = 0
        for _ in 0..<20 where outbox.enqueue(big) { written += 1 }
        XCTAssertGreaterThan(written, 0)
        XCTAssertLessThan(written, 20, "the disk filled up")
        XCTAssertEqual(written + (outbox.droppedCounts[.diskWriteFailed] ?? 0), 20, "every envelope is either on disk or counted")
        XCTAssertEqual(outbox.pending().count, written)
        XCTAssertTrue(
            try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/outbox").allSatisfy { !$0.hasSuffix(".tmp") },
            "a failed write leaves no partial file behind")
    }

    func testDSNParsingAndServerTokenRefusal() throws {
        let dsn = try DSN(parsing: "https://abcdef0123456789abcdef0123456789@errors.example.com:8443/sub/42")
        XCTAssertEqual(dsn.projectID, "42")
        XCTAssertEqual(dsn.envelopeURL.absoluteString, "https://errors.example.com:8443/sub/api/42/envelope/")
        XCTAssertThrowsError(try DSN(parsing: "http://flst_0123456789abcdef@127.0.0.1:8411/1")) { e in
            XCTAssertEqual(e as? DSN.ParseError, .serverTokenInDSN)
        }
        XCTAssertThrowsError(try DSN(parsing: "not a dsn"))
        XCTAssertThrowsError(try DSN(parsing: "http://127.0.0.1:8411/1"))
        XCTAssertThrowsError(try DSN(parsing: "http://key@127.0.0.1:8411/"))
    }
}
