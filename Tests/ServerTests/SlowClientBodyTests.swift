// Slow bodies (issue 29 item 2): once the headers are in, a body must keep arriving at the
// minimum rate or its connection is closed, and behind a trusted proxy one client's requests
// are capped by the address the proxy names, so neither trickling nor one address can hold
// every slot while a legitimate client waits.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Synchronization

final class SlowClientBodyTests: XCTestCase {
    /// Every slot held by an anonymous login POST sending one body byte every 0.3 s: never idle
    /// long enough for the inactivity timeout, and its headers are long complete.
    func testTricklingBodiesAreCutAndALegitimateClientIsServed() throws {
        let server = try TestServer { c in
            c.http.connectionLimit = 24
            c.http.perIPConnectionLimit = 0  // every client here is 127.0.0.1
            c.http.headerDeadlineSeconds = 60  // only the body rule is under test
            c.http.bodyProgressWindowSeconds = 1
            c.http.minBodyBytesPerSecond = 64
        }
        defer { server.stop() }
        let slow = BodyTrickler(port: server.port, connections: 24, interval: 0.3)
        defer { slow.stop() }
        XCTAssertEqual(slow.fds.count, 24)
        var status = -1
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && status != 200 {
            status = RawHTTP.sendRaw(port: server.port, Data("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), timeoutSeconds: 2).status
            if status != 200 { usleep(200_000) }
        }
        XCTAssertEqual(status, 200, "trickling bodies held every connection slot")
        XCTAssertTrue(slow.fds.allSatisfy { HostileClient.isClosedByServer($0, within: 5) }, "a trickling body was not cut")
        let health = try JSONValue.parse(RawHTTP.send(port: server.port, method: "GET", path: "/health").body)
        XCTAssertGreaterThanOrEqual(health["body_progress_disconnects"]?.int64Value ?? 0, 24, "\(health)")
    }

    /// A body that keeps the rate is not cut, however long it takes in total.
    func testABodyAtTheMinimumRateIsNotCut() throws {
        let server = try TestServer { c in
            c.http.bodyProgressWindowSeconds = 2
            c.http.minBodyBytesPerSecond = 16
        }
        defer { server.stop() }
        let fd = HostileClient.connect(port: server.port)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let event = TestEvents.envelope(TestEvents.native(offsets: [0x10]))
        HostileClient.write(
            fd,
            "POST /api/\(server.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "X-Sentry-Auth: Sentry sentry_key=\(server.publicKey)\r\nContent-Length: \(event.count)\r\n\r\n")
        // Over several windows: each slice is far more than a window's minimum.
        let size = max(64, event.count / 8)
        let slices = stride(from: 0, to: event.count, by: size).map { event[$0..<min(event.count, $0 + size)] }
        XCTAssertGreaterThan(slices.count, 3)
        for (i, slice) in slices.enumerated() {
            if i > 0 { Thread.sleep(forTimeInterval: 0.4) }  // pacing the sender, not synchronisation
            _ = slice.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let r = RawHTTP.parse(HostileInputBodyBudgetTests.readAll(fd))
        XCTAssertEqual(r.status, 200, r.text)
    }

    /// With the test's own address as the proxy: one forwarded client gets its share of
    /// requests in flight and then 429s, while another forwarded client — over more connections
    /// from the proxy's address than the per-address cap — is served.
    func testBehindATrustedProxyOneClientCannotTakeEverySlot() throws {
        let server = try TestServer { c in
            c.http.connectionLimit = 32
            c.http.perIPConnectionLimit = 4
            c.http.headerDeadlineSeconds = 60
            // Only the forwarded-client cap is under test: the held bodies must not be cut by the
            // body-rate rule meanwhile, however slowly a busy machine runs this test.
            c.http.minBodyBytesPerSecond = 0
            c.http.trustedProxies = TrustedProxies(parsing: ["127.0.0.1"])!
        }
        defer { server.stop() }
        func hold(forwardedFor: String, source: String? = nil) -> Int32 {
            let fd = HostileClient.connect(port: server.port, source: source)
            guard fd >= 0 else { return fd }
            HostileClient.write(
                fd, "POST /ui/login HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \(forwardedFor)\r\nContent-Length: 1000\r\n\r\nuser=")
            return fd
        }
        // The client names itself first; the proxy appends the address it saw.
        let held = (0..<10).map { _ in hold(forwardedFor: "10.9.9.9, 203.0.113.7") }
        defer { held.forEach { close($0) } }
        XCTAssertTrue(held.allSatisfy { $0 >= 0 }, "the proxy's connections are not capped per address")
        let refused = held.filter { HostileClient.isClosedByServer($0, within: 2) }.count
        XCTAssertEqual(refused, 6, "requests beyond 4 from the forwarded client 203.0.113.7 must be refused")
        let health = RawHTTP.send(port: server.port, method: "GET", path: "/health", headers: ["X-Forwarded-For": "198.51.100.1"])
        XCTAssertEqual(health.status, 200, "another forwarded client must be served")
        XCTAssertGreaterThanOrEqual(health.json?["forwarded_client_refusals"]?.int64Value ?? 0, 6)

        // From an untrusted peer the header is not believed: the socket address is capped.
        let spoofed = (0..<6).map { hold(forwardedFor: "192.0.2.\($0)", source: "127.0.0.2") }
        defer { spoofed.forEach { if $0 >= 0 { close($0) } } }
        let cut = spoofed.filter { $0 < 0 || HostileClient.isClosedByServer($0, within: 2) }.count
        XCTAssertEqual(cut, 2, "an untrusted peer cannot escape its cap with X-Forwarded-For")
    }

    func testServeTakesTrustedProxiesAsAddressesOrNetworks() throws {
        let exe = TestSupport.product("faultline")
        XCTAssertEqual(try TestSupport.run(exe, ["serve", "--trusted-proxy", "lb.example.com"]).exitCode, 2)
        XCTAssertEqual(try TestSupport.run(exe, ["serve", "--trusted-proxy", "10.0.0.0/40"]).exitCode, 2)
        XCTAssertTrue(try TestSupport.run(exe, ["serve", "--help"]).stdout.contains("--trusted-proxy ADDR[/BITS]"))
    }

    func testTheClientAddressIsBelievedOnlyFromTrustedProxies() throws {
        let proxies = try XCTUnwrap(TrustedProxies(parsing: ["10.0.0.0/8", "192.168.1.5"]))
        let lb = try XCTUnwrap(TrustedProxies.ipv4(parsing: "10.1.2.3"))
        let stranger = try XCTUnwrap(TrustedProxies.ipv4(parsing: "198.51.100.9"))
        XCTAssertEqual(proxies.clientAddress(peer: stranger, forwardedFor: "203.0.113.1", forwarded: nil), "198.51.100.9")
        XCTAssertEqual(proxies.clientAddress(peer: lb, forwardedFor: nil, forwarded: nil), "10.1.2.3")
        XCTAssertEqual(proxies.clientAddress(peer: lb, forwardedFor: "6.6.6.6, 203.0.113.1, 192.168.1.5", forwarded: nil), "203.0.113.1")
        XCTAssertEqual(proxies.clientAddress(peer: lb, forwardedFor: "203.0.113.1:5555", forwarded: nil), "203.0.113.1")
        XCTAssertEqual(
            proxies.clientAddress(peer: lb, forwardedFor: nil, forwarded: "for=192.0.2.60;proto=http, for=\"[2001:DB8::1]:80\""), "2001:db8:0:0::/64")
        // One subscriber's /64 is one client, whatever low bits it rotates; an IPv4-mapped address is IPv4.
        XCTAssertEqual(
            proxies.clientAddress(peer: lb, forwardedFor: "2001:db8:1:2:aaaa::1", forwarded: nil),
            proxies.clientAddress(peer: lb, forwardedFor: "[2001:db8:1:2:ffff:1:2:3]:443", forwarded: nil))
        XCTAssertEqual(proxies.clientAddress(peer: lb, forwardedFor: "::ffff:203.0.113.7", forwarded: nil), "203.0.113.7")
        XCTAssertEqual(proxies.clientAddress(peer: lb, forwardedFor: "10.4.4.4", forwarded: nil), "10.4.4.4", "only proxies: the leftmost")
        XCTAssertNil(TrustedProxies(parsing: ["10.0.0.0/33"]))
        XCTAssertNil(TrustedProxies(parsing: ["example.com"]))
        XCTAssertEqual(TrustedProxies.network(parsing: "10.20.30.40/16"), TrustedProxies.Network(network: 0x0A14_0000, mask: 0xFFFF_0000))
    }
}

/// Connections that send a login POST's headers (a 1,000-byte body declared) and then one body
/// byte every `interval` seconds until stopped.
final class BodyTrickler: @unchecked Sendable {
    private let stopped = Mutex(false)
    let fds: [Int32]
    private let done = DispatchSemaphore(value: 0)

    init(port: UInt16, connections: Int, interval: Double) {
        var open: [Int32] = []
        for _ in 0..<connections {
            let fd = HostileClient.connect(port: port)
            if fd >= 0, HostileClient.write(fd, "POST /ui/login HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n") { open.append(fd) }
        }
        fds = open
        Thread.detachNewThread { [self] in
            while !self.isStopped {
                for fd in self.fds { HostileClient.write(fd, "a") }
                Thread.sleep(forTimeInterval: interval)
            }
            self.done.signal()
        }
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    func stop() {
        stopped.withLock { $0 = true }
        done.wait()
        fds.forEach { close($0) }
    }
}
