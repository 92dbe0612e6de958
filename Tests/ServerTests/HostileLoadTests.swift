// Bounded load test (loopback, ~10 s): while hostile clients run — amplification envelopes with a
// valid key, slowloris connections, anonymous large bodies, all from 127.0.0.2 — legitimate
// ingest from 127.0.0.1 keeps its p99 under 100 ms (on SQLite; PostgreSQL: see the bound below)
// and the process's RSS stays under the ceiling documented in docs/SERVER.md (growth under 150 MiB
// over the idle server).
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Synchronization

final class HostileLoadTests: XCTestCase {
    static let duration: TimeInterval = 8
    static let rssGrowthCeiling = 150 * 1024 * 1024

    func testLegitimateIngestStaysFastUnderHostileLoad() throws {
        let server = try TestServer { c in
            c.http.connectionLimit = 512
            c.http.perIPConnectionLimit = 48
            c.http.headerDeadlineSeconds = 2
            c.limits.eventsPerInstall = 0
        }
        defer { server.stop() }
        let port = server.port, key = server.publicKey, project = server.projectID
        let baseline = ProcessMemory.rss
        let stop = Date().addingTimeInterval(Self.duration)
        let group = DispatchGroup()
        // Real threads (Dispatch's global queue would run only as many blocking loops as cores).
        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread.detachNewThread {
                body(); group.leave()
            }
        }
        let counters = Counters()

        // Amplification with a public key: 1.5 M tiny items, ~40 KiB gzip'd.
        var raw = Data("{}\n".utf8)
        let one = Data("{\"type\":\"x\"}\n".utf8)
        raw.append(Data((0..<1_500_000).flatMap { _ in one }))
        let bomb = Deflate.gzip(raw, level: 9)!
        raw = Data()
        for _ in 0..<2 {
            spawn {
                while Date() < stop {
                    let fd = HostileClient.connect(port: port, source: "127.0.0.2")
                    guard fd >= 0 else { counters.add(\.hostileRefusedConnect); usleep(10_000); continue }
                    var head = "POST /api/\(project)/envelope/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Encoding: gzip\r\n"
                    head += "X-Sentry-Auth: Sentry sentry_key=\(key)\r\nContent-Length: \(bomb.count)\r\n\r\n"
                    HostileClient.write(fd, head)
                    _ = bomb.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    _ = HostileClient.isClosedByServer(fd, within: 5)
                    close(fd)
                    counters.add(\.hostileRequests)
                }
            }
        }
        // Anonymous large bodies: announce 19 MiB and push bytes until the server closes.
        let junk = [UInt8](repeating: 0x41, count: 256 * 1024)
        for path in ["/health", "/api/\(project)/envelope/"] {
            spawn {
                while Date() < stop {
                    let fd = HostileClient.connect(port: port, source: "127.0.0.2")
                    guard fd >= 0 else { counters.add(\.hostileRefusedConnect); usleep(10_000); continue }
                    HostileClient.write(fd, "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(19 * 1024 * 1024)\r\n\r\n")
                    for _ in 0..<76 where junk.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 {}
                    close(fd)
                    counters.add(\.hostileRequests)
                }
            }
        }
        // Slowloris: 64 trickling connections (the per-IP limit refuses some, the deadline cuts the rest).
        let slow = HostileClient.Trickler(port: port, connections: 64, interval: 0.5, source: "127.0.0.2")
        defer { slow.stop() }

        // RSS sampler.
        let peak = Counters()
        spawn {
            while Date() < stop { peak.max(ProcessMemory.rss); usleep(50_000) }
        }

        // Legitimate ingest: sequential small events, each timed.
        var latencies: [Double] = []
        var failures = 0
        Thread.sleep(forTimeInterval: 0.3)
        while Date() < stop {
            let body = Deflate.gzip(TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20])))!
            let t0 = Date()
            let r = RawHTTP.send(
                port: port, method: "POST", path: "/api/\(project)/envelope/",
                headers: ["X-Sentry-Auth": "Sentry sentry_key=\(key)", "Content-Encoding": "gzip"], body: body)
            latencies.append(Date().timeIntervalSince(t0) * 1000)
            if r.status != 200 { failures += 1 }
            usleep(5_000)
        }
        group.wait()
        latencies.sort()
        let p50 = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
        let growth = peak.value - baseline
        print(
            "hostile load: \(latencies.count) legitimate events, p50 \(String(format: "%.1f", p50)) ms, p99 \(String(format: "%.1f", p99)) ms, "
                + "failures \(failures); \(counters.snapshot.hostileRequests) hostile requests, \(counters.snapshot.hostileRefusedConnect) refused connects; "
                + "RSS baseline \(baseline / 1_048_576) MiB, peak \(peak.value / 1_048_576) MiB (+\(growth / 1_048_576) MiB)")
        XCTAssertGreaterThan(latencies.count, 50)
        XCTAssertEqual(failures, 0)
        // On PostgreSQL each ingest is three round trips to database processes that compete with the
        // hostile clients for the same cores: measured here 130–1,200 ms p99 (2026-12-01, 2-core VM
        // under other load). There the bound catches a stall (an exhausted pool, a lock held across
        // requests), not latency; SQLite's in-process commit keeps the 100 ms promise.
        let bound: Double = TestDatabase.isPostgres ? 3000 : 100
        XCTAssertLessThan(p99, bound, "legitimate p99 \(p99) ms under hostile load on \(TestDatabase.name)")
        XCTAssertLessThan(growth, Self.rssGrowthCeiling, "RSS grew \(growth / 1_048_576) MiB")
        XCTAssertGreaterThan(counters.snapshot.hostileRequests, 10, "the hostile clients did not run")
        XCTAssertEqual(RawHTTP.send(port: port, method: "GET", path: "/health").status, 200)
    }
}

final class Counters: Sendable {
    struct Snapshot { var hostileRequests = 0; var hostileRefusedConnect = 0 }
    private let s = Mutex(Snapshot())
    private let maximum = Mutex(0)
    func add(_ k: WritableKeyPath<Snapshot, Int> & Sendable) { s.withLock { $0[keyPath: k] += 1 } }
    func max(_ v: Int) { maximum.withLock { $0 = Swift.max($0, v) } }
    var value: Int { maximum.withLock { $0 } }
    var snapshot: Snapshot { s.withLock { $0 } }
}
