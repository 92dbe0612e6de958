// Authentication failures, every ingest limit, and malformed or hostile requests: each gets a
// 4xx with a detail, nothing is stored, and the server keeps answering.
import Foundation
import FaultlineTestSupport
import XCTest
import FaultlineServer
import FaultlineProtocol

final class HostileInputTests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws {
        var limits = IngestLimits()
        limits.maxRequestBytes = 256 * 1024
        limits.maxDecompressedBytes = 1024 * 1024
        limits.maxEventBytes = 200 * 1024
        limits.eventsPerInstall = 3
        server = try TestServer(limits: limits)
    }
    override func tearDown() { server?.stop() }

    /// Asserts a refusal: the status, a JSON detail, nothing stored, and /health still answering.
    func assertRefused(_ r: RawHTTP.Response, _ status: Int, mentioning text: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, r.text, file: file, line: line)
        if let text {
            let detail = r.json?["detail"]?.stringValue ?? ""
            XCTAssertTrue(detail.localizedCaseInsensitiveContains(text), "detail '\(detail)' should mention '\(text)'", file: file, line: line)
        }
        XCTAssertEqual(try server.storedCount(), 0, "nothing may be stored", file: file, line: line)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/health").status, 200, file: file, line: line)
    }

    func envelope() -> Data { TestEvents.envelope(TestEvents.native(offsets: [0x10])) }

    // MARK: Authentication

    func testMissingKeyIsUnauthorized() {
        assertRefused(
            RawHTTP.send(port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/", body: envelope()), 401, mentioning: "public key")
    }

    func testUnknownKeyIsUnauthorized() {
        assertRefused(server.sendEnvelope(envelope(), key: String(repeating: "a", count: 32)), 401, mentioning: "unknown")
    }

    func testAnonymousUploadIsRefusedBeforeItsBodyIsRead() {
        // Headers announce 30 MiB but no body follows: the 401 must come from the headers alone
        // (an answer that waited for the body would time out here).
        let started = Date()
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/organizations/faultline/chunk-upload/",
            headers: ["Content-Type": "multipart/form-data; boundary=x"], contentLength: 30 * 1024 * 1024)
        assertRefused(r, 401, mentioning: "server token")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let ingest = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(String(repeating: "b", count: 32))"],
            contentLength: 200 * 1024)
        assertRefused(ingest, 401, mentioning: "unknown")
    }

    func testServerTokenIsRefusedOnIngest() {
        assertRefused(server.sendEnvelope(envelope(), key: server.token), 401, mentioning: "server token")
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["Authorization": "Bearer \(server.token)"], body: envelope())
        assertRefused(r, 401, mentioning: "server token")
    }

    func testKeyOfAnotherProjectIsForbidden() throws {
        let other = try server.server.stores.projects.createProject(slug: "other", name: "Other")
        let key = try server.server.stores.projects.createPublicKey(projectID: other.id, allowedAppIDs: [])
        assertRefused(server.sendEnvelope(envelope(), key: key.key.value), 403, mentioning: "not for project")
    }

    /// Issue 29 item 14: a public key cannot tell which other projects exist. Sent to the key's
    /// own project it is accepted; sent to another project that exists, and to one that does not,
    /// the answer is the same status and the same words but for the name the request gave.
    func testAKeyCannotEnumerateProjects() throws {
        _ = try server.server.stores.projects.createProject(slug: "secret", name: "Secret")
        let existing = server.sendEnvelope(envelope(), project: "secret")
        let missing = server.sendEnvelope(envelope(), project: "absent")
        XCTAssertEqual(existing.status, 403, existing.text)
        XCTAssertEqual(missing.status, existing.status, missing.text)
        XCTAssertEqual(missing.text.replacingOccurrences(of: "absent", with: "secret"), existing.text)
        XCTAssertEqual(try server.storedCount(), 0)
    }

    func testUnknownProjectAndPathLikeProjectNames() {
        assertRefused(server.sendEnvelope(envelope(), project: "999"), 403)
        for path in ["/api/..%2F..%2Fetc%2Fpasswd/envelope/", "/api/../../etc/envelope/", "/api/%00/envelope/"] {
            let r = RawHTTP.send(
                port: server.port, method: "POST", path: path,
                headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)"], body: envelope())
            XCTAssertTrue((400..<500).contains(r.status), "\(path): \(r.status)")
        }
        XCTAssertEqual(try server.storedCount(), 0)
    }

    func testReadAPIRequiresServerToken() {
        XCTAssertEqual(server.get("/api/0/projects/", token: "flst_wrong").status, 401)
        XCTAssertEqual(server.get("/api/0/projects/", token: server.publicKey).status, 401)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/api/0/projects/").status, 401)
        XCTAssertEqual(server.get("/api/0/projects/").status, 200)
    }

    func testAppIDAllowlist() throws {
        let key = try server.server.stores.projects.createPublicKey(projectID: server.projectID, allowedAppIDs: ["com.example.app"])
        assertRefused(
            server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1], appID: "com.evil")), key: key.key.value), 403, mentioning: "not allowed")
        assertRefused(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1])), key: key.key.value), 403, mentioning: "app id")
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1], appID: "com.example.app")), key: key.key.value).status, 200)
    }

    // MARK: Limits

    func testInstallVolumeCapAnswers429WithRetryAfter() throws {
        for _ in 0..<3 {
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1], installID: "install-1"))).status, 200)
        }
        let r = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1], installID: "install-1")))
        XCTAssertEqual(r.status, 429)
        XCTAssertNotNil(r.headers["retry-after"].flatMap(Int.init))
        XCTAssertEqual(try server.storedCount(), 3)
        // Another install is not affected; the header names the install too.
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1], installID: "install-2"))).status, 200)
        XCTAssertEqual(
            server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [1])), extraHeaders: ["X-Faultline-Install-Id": "install-1"]).status, 429)
    }

    func testRequestSizeCap() {
        let big = Data(repeating: 0x41, count: 300 * 1024)
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)"], body: big)
        assertRefused(r, 413)
    }

    func testOversizedContentLengthIsRefusedBeforeTheBodyIsSent() {
        // Claims 1 GiB and sends none of it: the 413 must come back without waiting for the body.
        var head = "POST /api/\(server.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nX-Sentry-Auth: Sentry sentry_key=\(server.publicKey)\r\n"
        head += "Content-Length: 1073741824\r\n\r\n"
        let start = Date()
        let r = RawHTTP.sendRaw(port: server.port, Data(head.utf8), timeoutSeconds: 5)
        XCTAssertLessThan(Date().timeIntervalSince(start), 4)
        assertRefused(r, 413, mentioning: "larger than")
    }

    func testGzipBombIsRefusedWhileInflating() {
        // 64 MiB of zeros gzip to ~64 KiB: under the request cap, far over the decompressed cap.
        // They sit in an attachment (skipped, never kept), so only the decompressed cap stops them.
        let bomb = Deflate.gzip(Data("{}\n{\"type\":\"attachment\",\"length\":\(64 * 1024 * 1024)}\n".utf8) + Data(count: 64 * 1024 * 1024), level: 9)!
        XCTAssertLessThan(bomb.count, 256 * 1024)
        let start = Date()
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "Content-Encoding": "gzip"], body: bomb)
        assertRefused(r, 413, mentioning: "decompressed")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
    }

    func testEventItemSizeCap() {
        var event = TestEvents.native(offsets: [1])
        event["extra"] = ["blob": .string(String(repeating: "x", count: 300 * 1024))]
        assertRefused(server.sendEnvelope(TestEvents.envelope(event)), 413, mentioning: "at most")
    }

    // MARK: Malformed and hostile bodies

    func testTruncatedEnvelope() {
        var body = envelope()
        body = body.prefix(body.count - 40)
        assertRefused(server.sendEnvelope(body), 400, mentioning: "length")
    }

    func testWrongItemLengths() {
        let payload = TestEvents.native(offsets: [1]).serialized()
        let tooShort = Data("{}\n{\"type\":\"event\",\"length\":10}\n".utf8) + payload + Data("\n".utf8)
        assertRefused(server.sendEnvelope(tooShort), 400)
        let negative = Data("{}\n{\"type\":\"event\",\"length\":-5}\n".utf8) + payload
        assertRefused(server.sendEnvelope(negative), 400, mentioning: "length")
        // A declared length over any cap is refused as soon as the item header is framed (413).
        let huge = Data("{}\n{\"type\":\"event\",\"length\":99999999999}\n".utf8) + payload
        assertRefused(server.sendEnvelope(huge), 413, mentioning: "length")
    }

    func testInvalidJSON() {
        assertRefused(server.sendEnvelope(Data("{not json\n".utf8)), 400, mentioning: "header")
        assertRefused(server.sendEnvelope(Data("{}\n{\"type\":\"event\"}\n{\"event_id\": oops}\n".utf8)), 400, mentioning: "event")
        assertRefused(server.sendEnvelope(Data("{}\n{\"type\":\"event\"}\n[1,2,3]\n".utf8)), 400, mentioning: "object")
        assertRefused(server.sendEnvelope(Data()), 400)
    }

    func testCorruptGzipAndUnsupportedEncoding() {
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "Content-Encoding": "gzip"],
            body: Data([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03]))
        assertRefused(r, 400, mentioning: "corrupt")
        let zstd = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "Content-Encoding": "zstd"], body: envelope())
        assertRefused(zstd, 415)
        // br is accepted now: a body that is not brotli is corrupt, not unsupported.
        let br = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "Content-Encoding": "br"], body: envelope())
        assertRefused(br, 400, mentioning: "corrupt")
    }

    func testHugeHeadersAreRefused() {
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "X-Junk": String(repeating: "j", count: 200 * 1024)],
            body: envelope())
        XCTAssertTrue((400..<500).contains(r.status) || r.status == -1, "status \(r.status)")
        XCTAssertEqual(try server.storedCount(), 0)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/health").status, 200)
    }

    func testBodyShorterThanContentLengthTimesOutWithoutStoring() {
        // Claims 1000 bytes, sends 10 and half-closes: the server must not store anything.
        var head = "POST /api/\(server.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nX-Sentry-Auth: Sentry sentry_key=\(server.publicKey)\r\n"
        head += "Content-Length: 1000\r\n\r\n0123456789"
        _ = RawHTTP.sendRaw(port: server.port, Data(head.utf8), halfClose: true, timeoutSeconds: 2)
        XCTAssertEqual(try server.storedCount(), 0)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/health").status, 200)
    }
}
