// Ingest's group commit on PostgreSQL (PostgresIngestBatcher): a batch answers every event as its
// own transaction would have — one id per new event id, nil for an id stored already or given twice,
// every column and byte kept, trace links made — and concurrent requests all get their answers.
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest
import Synchronization

final class PostgresIngestBatchTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    private static func event(_ projectID: Int64, _ eventID: String, release: String? = "r1", trace: String? = nil, bytes: Data? = nil) -> IncomingEvent {
        var e = IncomingEvent(
            projectID: projectID, eventID: eventID, received: 100.25, timestamp: 90.5, release: release, installID: "install \"1\"",
            compressedEvent: bytes ?? Deflate.compress(Data("{\"event_id\":\"\(eventID)\"}".utf8)))
        e.environment = "staging, {eu}"
        e.operatingSystem = "Linux 6.1 \\ NULL"
        e.traceID = trace
        e.spanID = trace.map { _ in "00f067aa0ba902b7" }
        return e
    }

    private func columns(_ url: String, _ id: Int64) throws -> [String?] {
        let c = try PGConnection(url: url)
        var row: [String?] = []
        try c.query("SELECT install_id, environment, os FROM occurrences WHERE id = $1", .int(id)) { r in
            row = [r.text(0), r.text(1), r.text(2)]
        }
        return row
    }

    private func traceLinks(_ url: String) throws -> [Int64: String] {
        let c = try PGConnection(url: url)
        var links: [Int64: String] = [:]
        try c.query("SELECT occurrence_id, trace_id FROM occurrence_traces") { links[$0.int(0)] = $0.text(1) ?? "" }
        return links
    }

    /// One batch, built by hand so its make-up does not depend on timing.
    func testABatchAnswersEachEventAsItsOwnTransactionWould() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let p = try store.createProject(slug: "batch", name: "Batch")
        let earlier = try XCTUnwrap(try store.storeIngest(event: Self.event(p.id, "stored-before"), items: []))
        // Every byte value, twice over: the binary array must carry them as they are.
        let binary = Data((0..<512).map { UInt8(truncatingIfNeeded: $0) })
        let batch = [
            Self.event(p.id, "b", trace: "4bf92f3577b34da6a3ce929d0e0e4736"),
            Self.event(p.id, "a", release: "quote \" brace } comma , backslash \\"),
            Self.event(p.id, "stored-before"),
            Self.event(p.id, "a", release: "the second a"),
            Self.event(p.id, "c", release: nil, bytes: binary)
        ]
        let c = try PGConnection(url: url)
        try c.exec("BEGIN")
        let ids = try PostgresIngestBatcher.insert(batch, c)
        try c.exec("COMMIT")

        XCTAssertEqual(ids.count, 5)
        XCTAssertNotNil(ids[0])
        XCTAssertNotNil(ids[1], "the first of two alike is stored")
        XCTAssertNil(ids[2], "an event id the project has already")
        XCTAssertNil(ids[3], "the second of two alike")
        XCTAssertNotNil(ids[4])
        XCTAssertEqual(Set(ids.compactMap { $0 }).count, 3)
        XCTAssertFalse(ids.contains(earlier))

        let a = try XCTUnwrap(try store.occurrence(id: ids[1]!))
        XCTAssertEqual(a.eventID, "a")
        XCTAssertEqual(a.release, "quote \" brace } comma , backslash \\")
        XCTAssertEqual(a.received, 100.25)
        XCTAssertEqual(a.timestamp, 90.5)
        let binaryRow = try XCTUnwrap(try store.occurrence(id: ids[4]!))
        XCTAssertNil(binaryRow.release)
        XCTAssertEqual(binaryRow.compressedEvent, binary)
        XCTAssertEqual(try columns(url, ids[1]!), ["install \"1\"", "staging, {eu}", "Linux 6.1 \\ NULL"])
        XCTAssertEqual(try traceLinks(url), [ids[0]!: "4bf92f3577b34da6a3ce929d0e0e4736"])
        XCTAssertEqual(try store.unprocessedOccurrences(limit: 10).count, 4, "the earlier event and the three new ones")
    }

    /// A request that arrives while the server stops gets an error, not a wait for a thread that ended.
    func testAnEventAfterCloseIsRefused() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let store = try PostgresStore(url: url, connections: 1)
        let p = try store.createProject(slug: "closing", name: "Closing")
        XCTAssertNotNil(try store.storeIngest(event: Self.event(p.id, "before-close"), items: []))
        store.close()
        XCTAssertThrowsError(try store.storeIngest(event: Self.event(p.id, "after-close"), items: [])) { error in
            XCTAssertEqual(error as? StoreError, .closed)
        }
    }

    /// Stored events are compressed already (StoredEvent): PostgreSQL must not try again (migration 16).
    func testStoredEventsAreNotCompressedAgain() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        try PostgresStore(url: url, connections: 1).close()
        let c = try PGConnection(url: url)
        var storage: String?
        try c.query("SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'occurrences'::regclass AND attname = 'event'") {
            storage = $0.text(0)
        }
        XCTAssertEqual(storage, "e", "EXTERNAL: out of line, uncompressed")
    }

    /// Requests from many threads at once: each gets its own answer whatever batches they fell into.
    func testConcurrentIngestsEachGetTheirAnswer() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let store = try PostgresStore(url: url, connections: 4)
        defer { store.close() }
        let p = try store.createProject(slug: "many", name: "Many")
        // 48 event ids, the first 16 sent twice: 64 requests.
        let names = (0..<48).map { "event-\($0)" } + (0..<16).map { "event-\($0)" }
        let answers = Mutex<[String: [Int64?]]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: names.count) { i in
            let trace = i % 3 == 0 ? String(format: "%032x", i + 1) : nil
            do {
                let id = try store.storeIngest(event: Self.event(p.id, names[i], release: "r\(i % 4)", trace: trace), items: [])
                answers.withLock { $0[names[i], default: []].append(id) }
            } catch {
                failures.withLock { $0.append("\(names[i]): \(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        let byName = answers.withLock { $0 }
        XCTAssertEqual(byName.count, 48)
        var ids = Set<Int64>()
        for (name, got) in byName {
            let stored = got.compactMap { $0 }
            XCTAssertEqual(stored.count, 1, "\(name): one delivery stored, any other answered nil (\(got))")
            if let id = stored.first {
                ids.insert(id)
                XCTAssertEqual(try store.occurrence(id: id)?.eventID, name)
            }
        }
        XCTAssertEqual(ids.count, 48)
        XCTAssertEqual(try store.unprocessedOccurrences(limit: 100).count, 48)
    }
}
