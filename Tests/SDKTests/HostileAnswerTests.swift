// What a server sends back, against a real HTTP server on 127.0.0.1 (issue 29, items 4 and 12): the
// SDK keeps at most 64 KiB of an answer's body and never inflates it, an answer cut off there still
// counts as its status, and a redirect is never followed: nothing is deleted, nothing (no body, no
// key) goes to another origin. The memory an app pays is measured in a child: SDKProcessTests.
@testable import Faultline
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

final class HostileAnswerTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("hostile") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    static let mebibyte = Data(repeating: 0x78, count: 1 << 20)
    var mebibyte: Data { Self.mebibyte }

    func event(_ n: Int) -> Envelope {
        let id = String(format: "%032x", n)
        let payload: JSONValue = ["event_id": .string(id), "message": .string("event \(n)")]
        return Envelope(header: ["event_id": .string(id)], items: [Envelope.Item(type: "event", payload: payload.serialized())])
    }

    func flusher(_ server: ScriptedHTTPServer, outbox: String, clock: TestClock = TestClock()) throws -> (Outbox, Flusher, TestClock) {
        let o = try Outbox(directory: outbox)
        return (o, Flusher(outbox: o, transport: HTTPTransport(dsn: try DSN(parsing: server.dsn()), timeout: 5), clock: clock), clock)
    }

    func get(_ server: ScriptedHTTPServer) throws -> HTTPAnswer {
        let request = HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(server.port)/")!, headers: [], body: nil, timeout: 10)
        return try CurlClient().perform(request).get()
    }

    func testAnEndlessBodyIsCutAtTheCapAndTheConnectionClosed() throws {
        for declared in [nil, Int64(8) << 30] {
            let server = try ScriptedHTTPServer { _ in
                .endless(200, headers: ["Retry-After": "7"], chunk: HostileAnswerTests.mebibyte, declaredLength: declared)
            }
            let answer = try get(server)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.header("Retry-After"), "7", "headers are read as before")
            XCTAssertEqual(answer.body, mebibyte.prefix(HTTPAnswer.bodyCap), "the first 64 KiB, no more")
            XCTAssertFalse(answer.bodyComplete)
            // The client hung up: the server got out what it read plus the two sockets' buffers,
            // a sliver of the 8 GiB it offered.
            XCTAssertTrue(server.waitForConnectionsToClose(timeout: 10), "the client closed the connection")
            XCTAssertLessThan(server.bodyBytesSent, 16 << 20, "declared \(declared.map(String.init) ?? "chunked")")
        }
    }

    func testAGzipAnswerIsKeptCompressedNeverInflated() throws {
        XCTAssertEqual(try Inflate.inflate(GzipBomb.make(inflatedMiB: 3), limit: 4 << 20), Data(count: 3 << 20), "a valid gzip stream")
        let bomb = GzipBomb.make(inflatedMiB: 1024)  // 1 GiB of zeros in ~1 MB
        let server = try ScriptedHTTPServer { _ in .bytes(200, headers: ["Content-Encoding": "gzip"], body: bomb) }
        let answer = try get(server)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.body, bomb.prefix(HTTPAnswer.bodyCap), "the compressed bytes as sent")
        XCTAssertNil(answer.completePlainBody, "nothing is parsed from a cut-off or encoded body")
    }

    func testAnAnswerCutOffAtTheCapStillCountsAsItsStatus() throws {
        let endless: (Int, [String: String]) -> ScriptedHTTPServer.Reply = { .endless($0, headers: $1, chunk: HostileAnswerTests.mebibyte) }
        let cases: [(ScriptedHTTPServer.Reply, check: (Flusher.Summary, Outbox) -> Void)] = [
            (
                endless(200, [:]),
                { s, o in
                    XCTAssertEqual(s.sent, 1); XCTAssertTrue(o.pending().isEmpty)
                }
            ),
            (
                endless(429, ["Retry-After": "30"]),
                { s, o in
                    XCTAssertEqual(s.stoppedBy, "rate limit"); XCTAssertEqual(o.pending().count, 1)
                }
            ),
            (endless(200, ["X-Sentry-Rate-Limits": "60:error:key"]), { s, o in XCTAssertEqual(s.sent, 1) }),
            (
                .bytes(400, body: Data(repeating: 0x7b, count: 10 << 20)),
                { s, o in
                    XCTAssertEqual(s.dropped, 1); XCTAssertEqual(o.droppedCounts[.rejectedByServer], 1)
                }
            ),
            (
                endless(503, [:]),
                { s, o in
                    XCTAssertEqual(s.stoppedBy, "retries exhausted"); XCTAssertEqual(o.pending().count, 1)
                }
            )
        ]
        for (n, (reply, check)) in cases.enumerated() {
            let server = try ScriptedHTTPServer { _ in reply }
            let (outbox, flusher, _) = try flusher(server, outbox: dir + "/case-\(n)")
            outbox.enqueue(event(n))
            let summary = flusher.flushOnce()
            check(summary, outbox)
            XCTAssertTrue(server.waitForConnectionsToClose(timeout: 10), "case \(n): the client hung up")
            XCTAssertLessThan(server.bodyBytesSent, (16 << 20) * server.requests.count, "case \(n): \(summary)")
        }
    }

    func testARedirectIsNeverFollowedNothingIsDeletedAndTheKeyGoesNowhereElse() throws {
        for status in [307, 308, 301, 302, 303] {
            let elsewhere = try ScriptedHTTPServer()  // must see no connection at all
            let location = "http://127.0.0.1:\(elsewhere.port)/api/1/envelope/"
            let server = try ScriptedHTTPServer { _ in .status(status, headers: ["Location": location], body: "") }
            let (outbox, flusher, clock) = try flusher(server, outbox: dir + "/\(status)")
            for n in 0..<10 { outbox.enqueue(event(n)) }

            let first = flusher.flushOnce()
            XCTAssertEqual(first.stoppedBy, "redirect (HTTP \(status)) not followed")
            XCTAssertEqual(first.sent + first.dropped, 0)
            XCTAssertEqual(first.remaining, 10)
            XCTAssertEqual(outbox.pending().count, 10, "\(status): nothing deleted")
            XCTAssertEqual(server.requests.count, 1, "\(status): one attempt; every envelope would get the same answer")
            XCTAssertEqual(try Envelope.parse(server.requests[0].body).eventID, String(format: "%032x", 0), "the body went out whole")
            XCTAssertEqual(flusher.flushOnce().stoppedBy, "backoff", "\(status): retried with back-off, not at once")
            XCTAssertEqual(server.requests.count, 1)

            clock.advance(Backoff.cap)
            server.setScript { _ in .status(200) }
            XCTAssertEqual(flusher.flushOnce().sent, 10, "\(status): all ten, once the server answers")
            XCTAssertEqual(
                server.requests.compactMap { try? Envelope.parse($0.body).eventID }.dropFirst(),
                (0..<10).map { String(format: "%032x", $0) }[...], "in order")
            XCTAssertNil(outbox.droppedCounts[.rejectedByServer])
            XCTAssertEqual(elsewhere.connectionCount, 0, "\(status): nothing went to the Location")
            XCTAssertTrue(elsewhere.requests.allSatisfy { $0.headers["x-sentry-auth"] == nil })
        }
    }

    func testALogArchiveIsNotRedirectedEither() throws {
        let elsewhere = try ScriptedHTTPServer()
        let server = try ScriptedHTTPServer { _ in .status(308, headers: ["Location": "http://127.0.0.1:\(elsewhere.port)/x"], body: "") }
        let archives = dir + "/archives"
        try FileManager.default.createDirectory(atPath: archives, withIntermediateDirectories: true)
        let archive = archives + "/app.2026-12-01T00-00-00.log.gz"
        FileManager.default.createFile(atPath: archive, contents: Deflate.gzip(Data("a line\n".utf8)))
        let dropped = Mutex(0)
        let uploader = ArchiveUploader(
            directory: archives, dsn: try DSN(parsing: server.dsn()), metadata: .init(installID: "i", appID: nil, release: nil),
            transport: HTTPTransport(dsn: try DSN(parsing: server.dsn()), timeout: 5), clock: TestClock(),
            drop: { n in dropped.withLock { $0 += n } })
        XCTAssertEqual(uploader.pass().stoppedBy, "backoff")
        XCTAssertTrue(FileManager.default.fileExists(atPath: archive), "the archive is kept")
        XCTAssertEqual(dropped.withLock { $0 }, 0)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(elsewhere.connectionCount, 0)
    }
}
