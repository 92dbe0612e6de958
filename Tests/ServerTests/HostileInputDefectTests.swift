// One test per defect found by trying the server as a hostile outsider (issue 9). Each drives the
// real server over HTTP on 127.0.0.1 and failed on the code before the fix.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class HostileInputDefectTests: XCTestCase {
    var server: TestServer!

    static func limits() -> IngestLimits {
        var limits = IngestLimits()
        limits.maxRequestBytes = 256 * 1024
        limits.maxDecompressedBytes = 32 * 1024 * 1024
        limits.eventsPerInstall = 3
        return limits
    }

    override func setUpWithError() throws { server = try TestServer(limits: Self.limits()) }
    override func tearDown() { server?.stop() }

    func ingestHeaders(key: String? = nil, extra: [String: String] = [:]) -> [String: String] {
        ["X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(key ?? server.publicKey)", "Content-Encoding": "gzip"].merging(extra) { _, b in b }
    }

    func post(_ envelope: Data, key: String? = nil, headers extra: [String: String] = [:]) -> RawHTTP.Response {
        RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/",
            headers: ingestHeaders(key: key, extra: extra), body: Deflate.gzip(envelope)!)
    }

    func items(_ list: [(String, String)]) -> Data {
        var out = Data("{}\n".utf8)
        for (type, payload) in list {
            out.append(Data("{\"type\":\"\(type)\",\"length\":\(payload.utf8.count)}\n\(payload)\n".utf8))
        }
        return out
    }

    func assertAlive(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/health").status, 200, "server must keep answering", file: file, line: line)
    }

    // MARK: 1. Session aggregates

    func testHugeSessionAggregatesDoNotKillTheServer() throws {
        let overflow = items([("sessions", #"{"aggregates":[{"started":"2026-01-01T00:00:00Z","exited":9223372036854775807,"errored":1}]}"#)])
        let r = post(overflow)
        XCTAssertEqual(r.status, 400, r.text)
        XCTAssertTrue(r.text.contains("exited"), r.text)
        assertAlive()
        // Sent again (after every restart in the report): still a 400, still alive.
        XCTAssertEqual(post(overflow).status, 400)
        assertAlive()
    }

    func testNegativeSessionAggregatesAreRefused() throws {
        let r = post(items([("sessions", #"{"aggregates":[{"exited":-1000,"crashed":-5}]}"#)]))
        XCTAssertEqual(r.status, 400, r.text)
        var counts = try server.server.stores.issueReads.itemCounts(projectID: server.projectID)
        XCTAssertEqual(counts.sessionsTotal, 0)
        XCTAssertEqual(post(items([("sessions", #"{"aggregates":[{"exited":7,"crashed":3}]}"#)])).status, 200)
        counts = try server.server.stores.issueReads.itemCounts(projectID: server.projectID)
        XCTAssertEqual(counts.sessionsTotal, 10)
        XCTAssertEqual(counts.sessionsCrashed, 3)
    }

    // MARK: 2. Amplification

    func testItemCountIsCheckedWhileFramingNotAfterParsing() throws {
        // 1.5 M tiny items: ~20 MiB inflated from ~60 KiB. Framed whole (the old way) they took
        // hundreds of MiB; counted while framing, ingest stops at item 101.
        let one = Data("{\"type\":\"x\"}\n\n".utf8)
        var body = Data("{}\n".utf8)
        body.append(Data(repeating: 0, count: 0))
        var raw = Data(capacity: one.count * 1_500_000)
        for _ in 0..<1_500_000 { raw.append(one) }
        body.append(raw)
        let gz = Deflate.gzip(body, level: 9)!
        raw = Data(); body = Data()
        XCTAssertLessThan(gz.count, 256 * 1024)
        var r: RawHTTP.Response!
        let growth = ProcessMemory.peakGrowth {
            r = RawHTTP.send(port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/", headers: ingestHeaders(), body: gz)
        }
        XCTAssertEqual(r.status, 413, r.text)
        XCTAssertTrue(r.text.contains("items"), r.text)
        XCTAssertLessThan(growth, 40 * 1024 * 1024, "peak RSS rose \(growth / 1_048_576) MiB for a \(gz.count)-byte request")
        XCTAssertEqual(try server.storedCount(), 0)
    }

    func testInflatedLogItemIsCappedWhileInflating() throws {
        // A log item that inflates to 24 MiB: refused at its declared length, before it is kept.
        let payload = String(repeating: "l", count: 24 * 1024 * 1024)
        let body = items([("log", payload)])
        let gz = Deflate.gzip(body, level: 9)!
        var r: RawHTTP.Response!
        let growth = ProcessMemory.peakGrowth {
            r = RawHTTP.send(port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/", headers: ingestHeaders(), body: gz)
        }
        XCTAssertEqual(r.status, 413, r.text)
        XCTAssertLessThan(growth, 20 * 1024 * 1024, "peak RSS rose \(growth / 1_048_576) MiB")
        // Without a length the payload runs to the newline: stopped as it grows past the cap.
        let noLength = Data("{}\n{\"type\":\"client_report\"}\n{\"discarded_events\":[\"".utf8) + Data(repeating: 0x61, count: 200 * 1024) + Data("\"]}\n".utf8)
        XCTAssertEqual(post(noLength).status, 413)
        XCTAssertEqual(try server.server.stores.issueReads.itemCounts(projectID: server.projectID).byType.values.reduce(0, +), 0)
    }

    func testEveryItemTypeHasTheAllowlistAndInstallCap() throws {
        let key = try server.server.stores.projects.createPublicKey(projectID: server.projectID, allowedAppIDs: ["com.example.app"])
        let session = items([("session", #"{"sid":"a","did":"install-9","init":true,"status":"ok"}"#)])
        XCTAssertEqual(post(session, key: key.key.value).status, 403, "a session without an app id is refused by an allowlisted key")
        XCTAssertEqual(post(session, key: key.key.value, headers: ["X-Faultline-App-Id": "com.evil"]).status, 403)
        XCTAssertEqual(post(session, key: key.key.value, headers: ["X-Faultline-App-Id": "com.example.app"]).status, 200)
        // Install cap 3 events per window, so 300 other items (InstallCaps): the session's did is
        // the install (one already counted); every kept item type counts.
        XCTAssertEqual(post(session).status, 200)
        let reports = items(Array(repeating: ("client_report", "{}"), count: 100))
        for _ in 0..<2 { XCTAssertEqual(post(reports, headers: ["X-Faultline-Install-Id": "install-9"]).status, 200) }
        let logs = items(Array(repeating: ("log", #"{"items":[]}"#), count: 98))
        XCTAssertEqual(post(logs, headers: ["X-Faultline-Install-Id": "install-9"]).status, 200, "300 in all")
        let r = post(items([("log", #"{"items":[]}"#)]), headers: ["X-Faultline-Install-Id": "install-9"])
        XCTAssertEqual(r.status, 429, r.text)
        XCTAssertNotNil(r.headers["retry-after"])
        XCTAssertEqual(r.headers["x-sentry-rate-limits"].map { $0.hasSuffix(":log_item:key") }, true, "names what was refused: \(r.headers)")
    }

    // MARK: 3. Anonymous bodies

    func testAnonymousBodiesAreRefusedFromTheHeadersAlone() {
        // Each announces 200 KiB (under the 256 KiB request cap here) and sends none: an answer
        // that waited for (or buffered) the body would not come before the client's 5 s timeout.
        let cases: [(String, String, [String: String])] = [
            ("POST", "/health", [:]),
            ("POST", "/no/such/route", [:]),
            ("PUT", "/buildid/abcd/debuginfo", [:]),
            ("POST", "/api/\(server.projectID)/envelope/", [:]),  // key only inside the envelope
            ("POST", "/api/\(server.projectID)/store/", ["Content-Encoding": "gzip"])
        ]
        for (method, path, headers) in cases {
            var head = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n"
            for (k, v) in headers { head += "\(k): \(v)\r\n" }
            head += "Content-Length: \(200 * 1024)\r\n\r\n"
            let start = Date()
            let r = RawHTTP.sendRaw(port: server.port, Data(head.utf8), timeoutSeconds: 5)
            XCTAssertTrue([401, 404, 405, 413].contains(r.status), "\(method) \(path): \(r.status) \(r.text)")
            XCTAssertLessThan(Date().timeIntervalSince(start), 4, "\(method) \(path) waited for the body")
        }
        assertAlive()
    }

    func testAnonymousIngestAnswersTheSameForKnownAndUnknownProjects() {
        let body = TestEvents.envelope(TestEvents.native(offsets: [1]))
        let known = RawHTTP.send(port: server.port, method: "POST", path: "/api/default/envelope/", body: body)
        let unknown = RawHTTP.send(port: server.port, method: "POST", path: "/api/no-such-project/envelope/", body: body)
        let byID = RawHTTP.send(port: server.port, method: "POST", path: "/api/\(server.projectID)/envelope/", body: body)
        XCTAssertEqual(known.status, 401)
        XCTAssertEqual(known.status, unknown.status)
        XCTAssertEqual(known.body, unknown.body)
        XCTAssertEqual(byID.body, unknown.body)
        // With an unknown key, too.
        let k = ["X-Sentry-Auth": "Sentry sentry_key=\(String(repeating: "c", count: 32))"]
        let a = RawHTTP.send(port: server.port, method: "POST", path: "/api/default/envelope/", headers: k, body: body)
        let b = RawHTTP.send(port: server.port, method: "POST", path: "/api/nope/envelope/", headers: k, body: body)
        XCTAssertEqual(a.status, b.status)
        XCTAssertEqual(a.body, b.body)
    }

    // MARK: 6. Content-Length

    func testConflictingContentLengthsAreRejected() throws {
        let envelope = TestEvents.envelope(TestEvents.native(offsets: [1]))
        var head = "POST /api/\(server.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        head += "X-Sentry-Auth: Sentry sentry_key=\(server.publicKey)\r\n"
        head += "Content-Length: \(envelope.count)\r\nContent-Length: 5\r\n\r\n"
        let r = RawHTTP.sendRaw(port: server.port, Data(head.utf8) + envelope, timeoutSeconds: 5)
        XCTAssertEqual(r.status, 400, r.text)
        XCTAssertTrue(r.text.contains("Content-Length"), r.text)
        XCTAssertEqual(try server.storedCount(), 0)
        // The same value twice is one length (RFC 9110 allows the repetition).
        var same = "POST /api/\(server.projectID)/envelope/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        same += "X-Sentry-Auth: Sentry sentry_key=\(server.publicKey)\r\n"
        same += "Content-Length: \(envelope.count)\r\nContent-Length: \(envelope.count)\r\n\r\n"
        XCTAssertEqual(RawHTTP.sendRaw(port: server.port, Data(same.utf8) + envelope, timeoutSeconds: 5).status, 200)
    }

    // MARK: 5. Multipart

    func testMultipartOfManyTinyPartsStopsAtThePartLimitQuickly() {
        let boundary = "b"
        var body = Data()
        let part = Data("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nx\r\n".utf8)
        for _ in 0..<60_000 { body.append(part) }
        body.append(Data("--b--\r\n".utf8))
        let start = Date()
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/organizations/faultline/chunk-upload/",
            headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "multipart/form-data; boundary=\(boundary)"],
            body: body)
        let seconds = Date().timeIntervalSince(start)
        XCTAssertEqual(r.status, 400, r.text)
        XCTAssertTrue(r.text.contains("more than 64 parts"), r.text)
        XCTAssertLessThan(seconds, 3, "a \(body.count)-byte body took \(seconds) s")
    }

    // MARK: 6. Debug files: temp files and chunks

    func testAFailedInstallLeavesNoStagingFile() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/cc") else {
            throw TestSupport.ShellError(command: "cc", output: "no C compiler at /usr/bin/cc")
        }
        let dir = TestSupport.makeTemporaryDirectory("fl-longid")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "int main(void){return 0;}\n".write(toFile: dir + "/m.c", atomically: false, encoding: .utf8)
        // A 200-byte build-id: its store file name exceeds NAME_MAX, so the install's rename fails.
        let cc = try TestSupport.run("/usr/bin/cc", ["-g", "-Wl,--build-id=0x" + String(repeating: "ab", count: 200), "-o", dir + "/m", dir + "/m.c"])
        XCTAssertEqual(cc.exitCode, 0, "\(cc)")
        for _ in 0..<2 {
            XCTAssertEqual(try server.uploadDebugFile(dir + "/m"), "error")
        }
        let staging = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory + "/tmp")
        XCTAssertEqual(staging, [], "failed installs leaked staging files")
        // Its chunks stay until they expire (another upload may be sending the same chunks);
        // expiry is testStartupRemovesStagingFilesAndExpiresOrphanedChunks'.
        assertAlive()
    }

    func testStartupRemovesStagingFilesAndExpiresOrphanedChunks() throws {
        let dir = server.dataDirectory
        server.stop(removeData: false)
        server = nil
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let old = Date().addingTimeInterval(-2 * ChunkUpload.defaultExpirySeconds)
        let staged = dir + "/tmp/upload-left-behind"
        let orphan = dir + "/chunks/" + String(repeating: "1", count: 40)
        let partial = dir + "/chunks/" + String(repeating: "2", count: 40) + ".tmp-x"
        let fresh = dir + "/chunks/" + String(repeating: "3", count: 40)
        for p in [staged, orphan, partial, fresh] { XCTAssertTrue(FileManager.default.createFile(atPath: p, contents: Data("x".utf8))) }
        for p in [staged, orphan, partial] { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: p) }
        let config = try ServerConfiguration.test(dataDirectory: dir)
        let restarted = try Server(config: config)
        try restarted.start()
        defer { restarted.stop() }
        XCTAssertEqual(RawHTTP.send(port: restarted.port, method: "GET", path: "/health").status, 200)
        XCTAssertFalse(FileManager.default.fileExists(atPath: staged), "staging file survived a restart")
        XCTAssertFalse(FileManager.default.fileExists(atPath: orphan), "an expired chunk survived a restart")
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial), "a partial chunk write survived a restart")
        XCTAssertTrue(FileManager.default.fileExists(atPath: fresh), "a recent chunk must be kept")
    }

    func testFullwidthDigitsAreNotSHA1() {
        // 37 ASCII hex digits and a fullwidth "０" (3 UTF-8 bytes): 40 bytes, not 40 hex digits.
        let checksum = String(repeating: "a", count: 37) + "\u{FF10}"
        let spec: JSONValue = [checksum: ["name": "x", "chunks": []]]
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/projects/faultline/default/files/difs/assemble/",
            headers: ["Authorization": "Bearer \(server.token)"], body: spec.serialized())
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.json?[checksum]?["state"]?.stringValue, "error", r.text)
    }
}

/// Slowloris and per-client connection limits, on a server with few slots so the test is quick.
final class SlowClientTests: XCTestCase {
    func testTricklingHeadersAreCutAtTheDeadline() throws {
        let server = try TestServer { c in
            c.http.connectionLimit = 24
            c.http.perIPConnectionLimit = 0  // every client here is 127.0.0.1
            c.http.headerDeadlineSeconds = 2
        }
        defer { server.stop() }
        // Every slot held by a client sending one header byte every 0.5 s (never idle for long).
        let slow = HostileClient.Trickler(port: server.port, connections: 24, interval: 0.5)
        defer { slow.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        // Within the deadline plus a little, legitimate requests get through again.
        let deadline = Date().addingTimeInterval(8)
        var status = -1
        while Date() < deadline && status != 200 {
            status = RawHTTP.sendRaw(port: server.port, Data("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), timeoutSeconds: 2).status
            if status != 200 { Thread.sleep(forTimeInterval: 0.25) }
        }
        XCTAssertEqual(status, 200, "slow clients held every connection slot")
        XCTAssertTrue(slow.fds.allSatisfy { HostileClient.isClosedByServer($0, within: 4) }, "a trickling client was not disconnected")
        let health = try JSONValue.parse(RawHTTP.send(port: server.port, method: "GET", path: "/health").body)
        XCTAssertGreaterThanOrEqual(health["header_deadline_disconnects"]?.int64Value ?? 0, 24)
    }

    func testOneAddressCannotTakeEveryConnection() throws {
        let server = try TestServer { c in
            c.http.connectionLimit = 16
            c.http.perIPConnectionLimit = 4
            c.http.headerDeadlineSeconds = 60  // only the per-IP limit is under test
        }
        defer { server.stop() }
        // 127.0.0.2 reaches the server on 127.0.0.1 as another address.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<16 {
            let fd = HostileClient.connect(port: server.port, source: "127.0.0.2")
            XCTAssertGreaterThanOrEqual(fd, 0)
            HostileClient.write(fd, "GET /health HTTP/1.1\r\n")
            held.append(fd)
        }
        let closed = held.filter { HostileClient.isClosedByServer($0, within: 1) }.count
        XCTAssertEqual(closed, 12, "connections beyond 4 from one address must be refused")
        let r = RawHTTP.sendRaw(port: server.port, Data("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), timeoutSeconds: 5)
        XCTAssertEqual(r.status, 200, "another address must still be served")
    }
}
