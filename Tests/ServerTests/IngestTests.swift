// Envelope ingest end to end against a real server: what is acknowledged is stored and grouped.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IngestTests: XCTestCase {
    var server: TestServer!
    override func setUpWithError() throws { server = try TestServer() }
    override func tearDown() { server?.stop() }

    func testGzipEnvelopeIsStoredGroupedAndReadable() throws {
        let id = TestEvents.eventID()
        let r = server.sendEnvelope(TestEvents.envelope(TestEvents.native(eventID: id, offsets: [0x1000, 0x2000, 0x3000])))
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.json?["id"]?.stringValue, id)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues.arrayValue?.count, 1)
        XCTAssertEqual(issues[0]?["count"]?.int64Value, 1)
        XCTAssertEqual(issues[0]?["releases"], ["app@1.0"])
        let issueID = try XCTUnwrap(issues[0]?["id"]?.stringValue)
        let issue = try server.getJSON("/api/0/issues/\(issueID)/")
        XCTAssertEqual(issue["representative_event"]?.stringValue, id)
        XCTAssertEqual(issue["stack"]?.arrayValue?.count, 3)
        // Unsymbolicated: grouped by build-id + offset, innermost (last sent) first.
        XCTAssertEqual(issue["stack"]?[0]?["offset"]?.stringValue, "0x3000")
        let event = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
        XCTAssertEqual(event["event"]?["event_id"]?.stringValue, id)
        let occurrences = try server.getJSON("/api/0/issues/\(issueID)/events/")
        XCTAssertEqual(occurrences.arrayValue?.count, 1)
    }

    /// An issue's events list pages with a `Link` as Sentry's does, and each event's `id` is its
    /// event id, which the event endpoint takes (it was an internal row number: 404; and the list
    /// stopped at 100 with no next page).
    func testAnIssuesEventsPageByLinkAndTheirIDsOpenTheEvent() throws {
        for _ in 0..<7 { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20]))).status, 200) }
        try server.waitUntilIdle()
        let issueID = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue?.first?["id"]?.stringValue)
        var path = "/api/0/issues/\(issueID)/events/?limit=3"
        var ids: [String] = []
        for _ in 0..<5 {
            let r = server.get(path)
            XCTAssertEqual(r.status, 200, r.text)
            ids += (r.json?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            guard let link = r.headers["link"], link.contains("results=\"true\""), let start = link.firstIndex(of: "<"),
                let end = link.firstIndex(of: ">"), let url = URLComponents(string: String(link[link.index(after: start)..<end]))
            else { break }
            path = url.percentEncodedPath + "?" + (url.percentEncodedQuery ?? "")
        }
        XCTAssertEqual(ids.count, 7)
        XCTAssertEqual(Set(ids).count, 7)
        for id in ids {
            XCTAssertEqual(id.count, 32, id)
            XCTAssertEqual(server.get("/api/0/projects/faultline/\(server.projectID)/events/\(id)/").status, 200, "event \(id) opens")
        }
    }

    func testSameStackGroupsTogetherAndDifferentStacksSplit() throws {
        for _ in 0..<3 { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20]))).status, 200) }
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x30], release: "app@2.0"))).status, 200)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues.arrayValue?.map { $0["count"]?.int64Value ?? 0 }.sorted(), [1, 3])
    }

    func testClientFunctionNamesGroupAcrossAddresses() throws {
        // Same functions at other addresses (another build): one issue, since names win over offsets.
        let a = TestEvents.native(buildID: "aa" + String(repeating: "0", count: 38), offsets: [0x10, 0x20], functions: ["main", "crash"])
        let b = TestEvents.native(buildID: "bb" + String(repeating: "0", count: 38), offsets: [0x50, 0x90], functions: ["main", "crash"])
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(a)).status, 200)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(b)).status, 200)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues.arrayValue?.count, 1)
        XCTAssertEqual(issues[0]?["title"]?.stringValue, "SIGSEGV in crash")
    }

    func testPlainDeflateQueryStringAndDSNAuthentication() throws {
        let event = TestEvents.native(offsets: [0x10])
        // Plain body, key in the query string.
        var r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/?sentry_key=\(server.publicKey)&sentry_version=7",
            body: TestEvents.envelope(event))
        XCTAssertEqual(r.status, 200, r.text)
        // A key only inside the envelope header's dsn is refused before the body is read (it
        // would mean buffering an anonymous body); the same deflate body with the header is taken.
        let e2 = TestEvents.native(offsets: [0x10])
        let deflated = Deflate.compress(TestEvents.envelope(e2, header: ["dsn": .string(server.dsn)]))
        r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["Content-Encoding": "deflate"], body: deflated)
        XCTAssertEqual(r.status, 401, r.text)
        r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["Content-Encoding": "deflate", "X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)"], body: deflated)
        XCTAssertEqual(r.status, 200, r.text)
        // Legacy /store/ with a bare event.
        r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/store/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)"], body: TestEvents.native(offsets: [0x10]).serialized())
        XCTAssertEqual(r.status, 200, r.text)
        // The same, gzip'd (one member: decoded whole, Ingest/GzipMember.swift).
        r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/store/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "Content-Encoding": "gzip"],
            body: try XCTUnwrap(Deflate.gzip(TestEvents.native(offsets: [0x20]).serialized())))
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(try server.storedCount(), 4)
    }

    func testHugeStackAndImageListsAreHandledQuickly() throws {
        // ~5,000 images and ~5,000 frames (under the 1 MiB event cap): mapping must not be quadratic.
        var event = TestEvents.native(offsets: [1])
        let images: [JSONValue] = (0..<5000).map { i in
            [
                "type": "elf", "code_id": .string(String(format: "%040x", i + 1)), "image_addr": .string("0x" + String(0x1000_0000 + i * 0x10000, radix: 16)),
                "image_size": 0x10000
            ]
        }
        let frames: [JSONValue] = (0..<5000).map { i in ["instruction_addr": .string("0x" + String(0x1000_0000 + (4999 - i) * 0x10000 + 0x10, radix: 16))] }
        event["debug_meta"] = ["images": .array(images)]
        event["exception"] = ["values": [["type": "SIGSEGV", "stacktrace": ["frames": .array(frames)]]]]
        let start = Date()
        let r = server.sendEnvelope(TestEvents.envelope(event))
        XCTAssertEqual(r.status, 200, r.text)
        try server.waitUntilIdle()
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues[0]?["culprit"]?.stringValue, String(format: "%040x", 1) + "+0x10")
    }

    func testDuplicateEventIDIsAcknowledgedOnce() throws {
        let env = TestEvents.envelope(TestEvents.native(offsets: [0x10]))
        XCTAssertEqual(server.sendEnvelope(env).status, 200)
        XCTAssertEqual(server.sendEnvelope(env).status, 200)
        XCTAssertEqual(try server.storedCount(), 1)
    }

    func testSessionsLogsAndClientReportsAreCountedAndGiveCrashFreeRate() throws {
        let items = [
            Envelope.Item(type: "session", payload: Data(#"{"sid":"a","init":true,"status":"ok"}"#.utf8)),
            Envelope.Item(type: "session", payload: Data(#"{"sid":"b","init":true,"status":"crashed"}"#.utf8)),
            Envelope.Item(type: "sessions", payload: Data(#"{"aggregates":[{"started":"2026-01-01T00:00:00Z","exited":2}]}"#.utf8)),
            Envelope.Item(type: "log", payload: Data(#"{"items":[{"timestamp":1764547200,"level":"info","body":"a log line"}]}"#.utf8)),
            Envelope.Item(type: "client_report", payload: Data(#"{"discarded_events":[]}"#.utf8))
        ]
        let body = Envelope(header: [:], items: items).serialized()
        XCTAssertEqual(server.sendEnvelope(body).status, 200)
        let project = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/")
        XCTAssertEqual(project["items"]?["session"]?.int64Value, 2)
        XCTAssertEqual(project["items"]?["log"]?.int64Value, 1)
        XCTAssertEqual(project["items"]?["client_report"]?.int64Value, 1)
        XCTAssertEqual(project["sessions"]?["total"]?.int64Value, 4)
        XCTAssertEqual(project["sessions"]?["crashed"]?.int64Value, 1)
        XCTAssertEqual(project["sessions"]?["crash_free_rate"]?.doubleValue ?? -1, 0.75, accuracy: 1e-9)
    }

    func testGracefulStopGroupsEverythingAcknowledged() throws {
        for i in 0..<50 { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [UInt64(i % 5) + 1]))).status, 200) }
        let dir = server.dataDirectory
        server.stop(removeData: false)
        let store = try TestDatabase.openStore(dataDirectory: dir)
        defer { store.close(); try? FileManager.default.removeItem(atPath: dir) }
        let t = try store.totals()
        XCTAssertEqual(t.occurrences, 50)
        XCTAssertEqual(t.processed, 50)
        server = nil
    }
}

final class GroupingIdempotenceTests: XCTestCase {
    /// The worker may see one occurrence twice (ingest queue + start-up scan); counts must not double.
    func testGroupingTheSameOccurrenceTwiceCountsItOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        let id = TestEvents.eventID()
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(eventID: id, offsets: [0x10]))).status, 200)
        try server.waitUntilIdle()
        let occurrence = try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id))
        let event = try StoredEvent.decode(occurrence.compressedEvent)
        let stack = StackExtractor.signature(of: event, grouping: .newProjects)
        let (data, key) = stack.encodedWithKey
        let fp = Fingerprinter.fingerprint(stack, symbolicator: server.server.symbolicator)
        try server.server.store.recordGrouping([
            GroupingOutcome(
                occurrenceID: occurrence.id, projectID: server.projectID, stack: stack,
                stackEncoded: data, stackKey: key, fingerprint: fp,
                timestamp: occurrence.timestamp, release: nil)
        ])
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues[0]?["count"]?.int64Value, 1)
    }
}
