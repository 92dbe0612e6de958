// Large bodies with a valid public key (issue 29 item 1) and absurd Content-Lengths (its
// oddity): what the server buffers at once is bounded by its body budget, whatever key the
// requests carry, and a length of 2^63 or more is refused before any body byte.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Synchronization

final class HostileInputBodyBudgetTests: XCTestCase {
    static let mib = 1024 * 1024

    /// The issue's attack scaled down: 48 keyed connections from four addresses, each declaring a
    /// 20 MiB envelope and sending 19 MiB of it, against a `faultline serve` process with its
    /// defaults: each address may hold 3 such bodies (64 MiB), all of them together 9 (192 MiB).
    /// Without the budget the 48 buffer 912 MiB.
    func testKeyedLargeBodiesFromFourAddressesStayWithinTheBudget() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-body-budget")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let serve = try CrashSafetyTests.ServeProcess(dataDir: dir)
        defer { serve.process.end() }
        let banner = try serve.banner()
        let port = try XCTUnwrap(serve.port(banner))
        let dsn = try DSN(parsing: String(try XCTUnwrap(banner.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
        let pid = serve.process.processIdentifier
        let baseline = try XCTUnwrap(PeakMemory.highWaterMark(of: pid))
        let ceiling = 400 * Self.mib

        let flood = BodyFlood(
            port: port, connections: 48, sources: ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"],
            head: "POST /api/\(dsn.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nX-Sentry-Auth: Sentry sentry_key=\(dsn.publicKey.value)\r\n"
                + "Content-Length: \(20 * Self.mib)\r\n\r\n",
            bodyBytes: 19 * Self.mib)
        defer { flood.closeAll() }
        var peak = baseline
        let deadline = Date().addingTimeInterval(90)
        while !flood.allFinished && Date() < deadline {
            peak = max(peak, PeakMemory.highWaterMark(of: pid) ?? 0)
            if peak > ceiling { flood.abort() }
            usleep(20_000)
        }
        peak = max(peak, PeakMemory.highWaterMark(of: pid) ?? 0)
        XCTAssertTrue(flood.allFinished, "the senders did not finish in time")

        // While the admitted bodies are held, a small event from another address still goes in.
        let event = TestEvents.envelope(TestEvents.native(offsets: [0x10]))
        let small = RawHTTP.send(
            port: port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
            headers: ["X-Sentry-Auth": dsn.authHeader(client: "budget/1")], body: event)
        XCTAssertEqual(small.status, 200, small.text)
        let health = try JSONValue.parse(RawHTTP.send(port: port, method: "GET", path: "/health").body)
        let refusedByAddress = health["body_budget_refusals"]?["address"]?.int64Value ?? 0
        let refusedByServer = health["body_budget_refusals"]?["server"]?.int64Value ?? 0
        print(
            "body budget: baseline \(baseline / Self.mib) MiB, peak \(peak / Self.mib) MiB; \(flood.completeBodies) bodies sent whole, "
                + "\(refusedByAddress) refused by the per-address budget, \(refusedByServer) by the server's, "
                + "\(health["per_ip_refusals"]?.int64Value ?? 0) at accept")
        XCTAssertLessThan(peak, ceiling, "server peak RSS \(peak / Self.mib) MiB while keyed bodies were held")
        XCTAssertLessThan(peak - baseline, 250 * Self.mib, "growth over the idle server")
        XCTAssertGreaterThanOrEqual(refusedByAddress + refusedByServer, 20, "at most 9 bodies of 20 MiB are held at once")
        XCTAssertGreaterThan(refusedByServer, 0, "four addresses together reach the server's budget")

        // Once the held connections go, their reservations are returned.
        flood.closeAll()
        let junk = Data(repeating: 0x41, count: Self.mib)
        var status = 429
        let again = Date().addingTimeInterval(20)
        while status == 429 && Date() < again {
            let fd = HostileClient.connect(port: port, source: "127.0.0.2")
            guard fd >= 0 else { usleep(50_000); continue }
            HostileClient.write(
                fd,
                "POST /api/\(dsn.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    + "X-Sentry-Auth: Sentry sentry_key=\(dsn.publicKey.value)\r\nContent-Length: \(junk.count)\r\n\r\n")
            _ = junk.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            status = RawHTTP.parse(Self.readAll(fd)).status
            close(fd)
            if status == 429 { usleep(100_000) }
        }
        XCTAssertNotEqual(status, 429, "the budget was not returned when the connections closed")
    }

    func testABodyBudgetCountsLargeBodiesPerAddressAndInTotal() {
        let budget = BodyBudget(serverBytes: 100 * Self.mib, perAddressBytes: 40 * Self.mib)
        let small = BodyBudget.Claim(address: "a")
        XCTAssertNil(budget.extend(small, toBodyBytes: BodyBudget.uncountedBytes))
        XCTAssertEqual(budget.reserved, 0, "small bodies are not counted")
        let a1 = BodyBudget.Claim(address: "a"), a2 = BodyBudget.Claim(address: "a")
        XCTAssertNil(budget.extend(a1, toBodyBytes: 30 * Self.mib))
        XCTAssertEqual(budget.extend(a2, toBodyBytes: 20 * Self.mib), .address)
        let others = (0..<3).map { BodyBudget.Claim(address: "b\($0)") }
        XCTAssertNil(budget.extend(others[0], toBodyBytes: 35 * Self.mib))
        XCTAssertNil(budget.extend(others[1], toBodyBytes: 35 * Self.mib))
        XCTAssertEqual(budget.extend(others[2], toBodyBytes: 35 * Self.mib), .server)
        budget.release(a1)
        budget.release(a1)  // idempotent
        XCTAssertNil(budget.extend(others[2], toBodyBytes: 30 * Self.mib))
        XCTAssertNil(budget.extend(a2, toBodyBytes: 0), "a growing body without a length reserves as it grows")
        XCTAssertEqual(budget.extend(a2, toBodyBytes: 10 * Self.mib), .server)
        XCTAssertEqual(budget.refusals.server, 2)
        XCTAssertEqual(budget.refusals.address, 1)
    }

    func testAContentLengthOf2To63OrMoreGets413BeforeAnyBody() throws {
        XCTAssertEqual(ContentLength.parse(" 9223372036854775808 "), 9_223_372_036_854_775_808)
        XCTAssertEqual(ContentLength.parse("99999999999999999999999999"), UInt64.max)
        XCTAssertNil(ContentLength.parse("-1"))
        XCTAssertNil(ContentLength.parse("0x10"))
        let server = try TestServer()
        defer { server.stop() }
        for length in ["9223372036854775808", "18446744073709551615"] {
            // Headers only: a server that waits for the body answers nothing before the timeout.
            let head = "POST /api/\(server.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nX-Sentry-Auth: Sentry sentry_key=\(server.publicKey)\r\n"
            let r = RawHTTP.sendRaw(port: server.port, Data((head + "Content-Length: \(length)\r\n\r\n").utf8), timeoutSeconds: 10)
            XCTAssertEqual(r.status, 413, "Content-Length \(length): \(r.text)")
        }
    }

    static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { return data }
            data.append(buf, count: n)
        }
    }
}

/// Connections that each send `head` and then `bodyBytes` of body as fast as the server takes
/// them, one thread each, and keep the connection open afterwards (until `closeAll`).
final class BodyFlood: @unchecked Sendable {
    private struct Progress {
        var fds: [Int32] = []
        var finished = 0
        var whole = 0
        var aborted = false
    }
    private let progress = Mutex(Progress())
    private let total: Int

    init(port: UInt16, connections: Int, sources: [String], head: String, bodyBytes: Int) {
        total = connections
        let chunk = [UInt8](repeating: 0x41, count: 256 * 1024)
        for i in 0..<connections {
            let source = sources[i % sources.count]
            Thread.detachNewThread { [self] in
                let fd = HostileClient.connect(port: port, source: source)
                var left = bodyBytes
                if fd >= 0 {
                    var tv = timeval(tv_sec: 10, tv_usec: 0)
                    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                    progress.withLock { $0.fds.append(fd) }
                    if HostileClient.write(fd, head) {
                        while left > 0 && !isAborted {
                            let n = chunk.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, min($0.count, left), Int32(MSG_NOSIGNAL)) }
                            if n <= 0 { break }
                            left -= n
                        }
                    }
                }
                progress.withLock { p in
                    p.finished += 1
                    if left == 0 { p.whole += 1 }
                }
            }
        }
    }

    private var isAborted: Bool { progress.withLock { $0.aborted } }
    func abort() { progress.withLock { $0.aborted = true } }
    var allFinished: Bool { progress.withLock { $0.finished == total } }
    /// Connections whose whole body the server took (or discarded while reading).
    var completeBodies: Int { progress.withLock { $0.whole } }

    func closeAll() {
        let open = progress.withLock { p in
            defer { p.fds = [] }
            return p.fds
        }
        open.forEach { close($0) }
    }
}
