// Test harness: a real server on 127.0.0.1 (ephemeral port, temporary data directory) and a raw
// HTTP/1.1 client over POSIX sockets, so tests can send exactly the bytes they mean (bad lengths,
// huge headers) and see exactly what comes back.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineHashing

final class TestServer {
    let dataDirectory: String
    let server: Server
    let bootstrap: Bootstrap
    var port: UInt16 { server.port }
    var publicKey: String { bootstrap.publicKey.value }
    var token: String { bootstrap.serverToken }
    var projectID: Int64 { bootstrap.project.id }
    var dsn: String { server.dsn(key: bootstrap.publicKey, project: bootstrap.project) }

    /// `restarting`: the bootstrap of the server that made `dataDirectory` (a restart creates none).
    init(
        limits: IngestLimits = IngestLimits(), dataDirectory: String? = nil, durability: SQLiteStore.Durability = .normal,
        restarting previous: Bootstrap? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        self.dataDirectory = dataDirectory ?? TestSupport.makeTemporaryDirectory("faultline-server")
        var config = try ServerConfiguration.test(dataDirectory: self.dataDirectory)
        config.threads = 0  // the default: a thread per connection (as `faultline serve` runs)
        config.limits = limits
        config.durability = durability
        configure(&config)
        server = try Server(config: config)
        guard let b = server.bootstrap ?? previous else {
            // A fresh directory always bootstraps a default project; no project is a broken server.
            struct NoDefaultProject: Error, CustomStringConvertible { var description: String }
            throw NoDefaultProject(description: "the server created no default project in \(self.dataDirectory)")
        }
        bootstrap = b
        try server.start()
    }

    func stop(removeData: Bool = true) {
        server.stop()
        if removeData { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    /// Waits until every stored occurrence is grouped and no backfill runs.
    func waitUntilIdle(timeout: TimeInterval = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let t = try server.stores.issueReads.totals()
            if t.occurrences == t.processed && server.processor.pending == 0 && !server.backfiller.isBusy { return }
            usleep(20_000)
        }
        XCTFail("server did not become idle in \(timeout) s")
    }

    func get(_ path: String, token: String? = nil) -> RawHTTP.Response {
        RawHTTP.send(port: port, method: "GET", path: path, headers: ["Authorization": "Bearer \(token ?? self.token)"])
    }

    func getJSON(_ path: String) throws -> JSONValue {
        let r = get(path)
        XCTAssertEqual(r.status, 200, "GET \(path): \(r.text)")
        return try JSONValue.parse(r.body)
    }

    func sendEnvelope(_ body: Data, gzip: Bool = true, key: String? = nil, project: String? = nil, extraHeaders: [String: String] = [:]) -> RawHTTP.Response {
        var headers = [
            "Content-Type": "application/x-sentry-envelope",
            "X-Sentry-Auth": "Sentry sentry_version=7, sentry_client=tests/1.0, sentry_key=\(key ?? publicKey)"
        ]
        if gzip { headers["Content-Encoding"] = "gzip" }
        for (k, v) in extraHeaders { headers[k] = v }
        return RawHTTP.send(
            port: port, method: "POST", path: "/api/\(project ?? String(projectID))/envelope/",
            headers: headers, body: gzip ? Deflate.gzip(body)! : body)
    }

    func storedCount() throws -> Int64 { try server.stores.issueReads.totals().occurrences }
}

extension ServerConfiguration {
    /// Port 0 (any free one), on this run's database (TestDatabase: SQLite in the directory, or a
    /// PostgreSQL database of its own that a restart on the same directory finds again).
    static func test(dataDirectory: String) throws -> ServerConfiguration {
        var config = ServerConfiguration(dataDirectory: dataDirectory)
        config.port = 0
        // Reads wait for their lookups as they did before the budget, so a test that reads a
        // stack right after an upload does not depend on this machine's load; ReadSymbolicationTests
        // sets the budget it tests.
        config.readSymbolicationBudget = 60
        config.databaseURL = try TestDatabase.url(forDataDirectory: dataDirectory)
        return config
    }
}

extension TestDatabase {
    /// The store a (stopped) server on `dataDirectory` used, opened again to look at what it kept.
    static func openStore(dataDirectory: String) throws -> CoreStoreUnderTest {
        if let url = try url(forDataDirectory: dataDirectory) { return try PostgresStore(url: url, connections: 2) }
        return try SQLiteStore(path: dataDirectory + "/faultline.sqlite")
    }
}

/// Builders for the envelopes and events tests send.
enum TestEvents {
    static func eventID() -> String { UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    /// A native crash event with caller-first frames at module offsets of one image.
    static func native(
        eventID: String = TestEvents.eventID(), buildID: String = "0123456789abcdef0123456789abcdef01234567",
        modulePath: String = "/opt/app/bin/app", base: UInt64 = 0x5555_0000_0000, offsets: [UInt64],
        release: String = "app@1.0", installID: String? = nil, appID: String? = nil, functions: [String?]? = nil
    ) -> JSONValue {
        var frames: [JSONValue] = []
        for (i, off) in offsets.enumerated() {
            var f: [String: JSONValue] = [
                "instruction_addr": .string("0x" + String(base + off, radix: 16)), "image_addr": .string("0x" + String(base, radix: 16))
            ]
            if let fs = functions, i < fs.count, let fn = fs[i] { f["function"] = .string(fn) }
            frames.append(.object(f))
        }
        var event: [String: JSONValue] = [
            "event_id": .string(eventID), "timestamp": .double(Date().timeIntervalSince1970), "platform": "native", "level": "fatal",
            "release": .string(release),
            "exception": [
                "values": [
                    [
                        "type": "SIGSEGV", "value": "Segfault", "mechanism": ["type": "signalhandler", "handled": false],
                        "stacktrace": ["frames": .array(frames), "instruction_addr_adjustment": "all_but_first"]
                    ]
                ]
            ],
            "debug_meta": [
                "images": [
                    [
                        "type": "elf", "code_file": .string(modulePath), "code_id": .string(buildID),
                        "image_addr": .string("0x" + String(base, radix: 16)), "image_size": .int(64 * 1024 * 1024)
                    ]
                ]
            ]
        ]
        if let installID { event["user"] = ["id": .string(installID)] }
        if let appID { event["contexts"] = ["app": ["app_identifier": .string(appID)]] }
        return .object(event)
    }

    static func envelope(_ event: JSONValue, header: [String: JSONValue] = [:], extraItems: [Envelope.Item] = []) -> Data {
        var h = header
        if h["event_id"] == nil, let id = event["event_id"] { h["event_id"] = id }
        let item = Envelope.Item(type: "event", payload: event.serialized())
        return Envelope(header: .object(h), items: [item] + extraItems).serialized()
    }
}

extension TestServer {
    /// Uploads one file with sentry-cli's protocol (one chunk per 8 MiB) and returns the assemble state.
    @discardableResult
    func uploadDebugFile(_ path: String) throws -> String? { try Self.uploadDebugFile(path, port: port, token: token) }

    /// The same against any server (a `faultline serve` process).
    @discardableResult
    static func uploadDebugFile(_ path: String, port: UInt16, token: String) throws -> String? {
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        var chunks: [(String, Data)] = []
        var i = 0
        while i < file.count {
            let c = file.subdata(in: i..<min(i + ChunkUpload.chunkSize, file.count))
            chunks.append((SHA1Hash.hex(c), c)); i += ChunkUpload.chunkSize
        }
        let boundary = "b-\(UUID().uuidString)"
        var body = Data()
        for (sha, data) in chunks {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file_gzip\"; filename=\"\(sha)\"\r\n\r\n".utf8))
            body.append(Deflate.gzip(data)!); body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        let up = RawHTTP.send(
            port: port, method: "POST", path: "/api/0/organizations/faultline/chunk-upload/",
            headers: ["Authorization": "Bearer \(token)", "Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
        XCTAssertEqual(up.status, 200, up.text)
        let checksum = SHA1Hash.hex(file)
        let spec: JSONValue = [checksum: ["name": .string((path as NSString).lastPathComponent), "chunks": .array(chunks.map { .string($0.0) })]]
        return assemble(spec, checksum: checksum, port: port, token: token)
    }

    /// Asks `assemble` until the file's state is final (as sentry-cli --wait and `faultline upload`
    /// poll: `created` and `assembling` mean the server's workers are at it); returns that state.
    static func assemble(_ spec: JSONValue, checksum: String, port: UInt16, token: String, timeout: TimeInterval = 60) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let r = RawHTTP.send(
                port: port, method: "POST", path: "/api/0/projects/faultline/default/files/difs/assemble/",
                headers: ["Authorization": "Bearer \(token)"], body: spec.serialized())
            let state = r.json?[checksum]?["state"]?.stringValue
            if state != "created" && state != "assembling" || Date() > deadline { return state }
            usleep(20_000)
        }
    }
}
