// A real server on 127.0.0.1 for the log-archive tests, a raw HTTP client that sends exactly the
// bytes a test means (hostile names, wrong lengths), and helpers to build archives.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineHashing

final class ArchiveServer {
    let dataDirectory: String
    var server: Server
    let publicKey: String
    let token: String
    let projectID: Int64
    var port: UInt16 { server.port }
    var dsn: String { "http://\(publicKey)@127.0.0.1:\(port)/\(projectID)" }

    init(
        dataDirectory: String? = nil, port: UInt16 = 0, limits: LogArchiveLimits = LogArchiveLimits(), ingest: IngestLimits = IngestLimits(),
        keys: (String, String)? = nil
    ) throws {
        self.dataDirectory = dataDirectory ?? TestSupport.makeTemporaryDirectory("archive-server")
        var config = ServerConfiguration(dataDirectory: self.dataDirectory)
        config.port = port
        config.threads = 4
        config.durability = .normal
        config.logArchives = limits
        config.limits = ingest
        config.databaseURL = try TestDatabase.url(forDataDirectory: self.dataDirectory)  // PostgreSQL on tools/test's second pass
        server = try Server(config: config)
        if let b = server.bootstrap {
            publicKey = b.publicKey.value; token = b.serverToken; projectID = b.project.id
        } else {
            let (k, t) = try XCTUnwrap(keys, "a reopened data directory needs the keys of its first start")
            publicKey = k; token = t; projectID = 1
        }
        do {
            try server.start()
        } catch {
            server.stop()  // its workers and store are up: a caller that tries again must not leak them
            throw error
        }
    }

    private var stopped = false
    /// Idempotent: the store's writer waits for its thread once, a second stop would wait forever.
    func stop() {
        guard !stopped else { return }
        stopped = true
        server.stop()
    }

    /// The directory's files outside `log-archives/` and the SQLite files (what hostile uploads must not create).
    func filesOutsideArchives() -> [String] {
        var out: [String] = []
        let e = FileManager.default.enumerator(atPath: dataDirectory)
        while let rel = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            FileManager.default.fileExists(atPath: dataDirectory + "/" + rel, isDirectory: &isDir)
            if !isDir.boolValue && !rel.hasPrefix("log-archives/") && !rel.hasPrefix("faultline.sqlite") { out.append(rel) }
        }
        return out.sorted()
    }

    func storedArchiveFiles() -> [String] {
        var out: [String] = []
        let e = FileManager.default.enumerator(atPath: dataDirectory + "/log-archives")
        while let rel = e?.nextObject() as? String { if rel.hasSuffix(".gz") { out.append(rel) } }
        return out
    }

    func upload(
        _ body: Data, name: String = "app-1.log.gz", sha: String? = nil, install: String = "install-1",
        release: String? = "app@1.0", extra: [String: String] = [:], contentLength: Int? = nil
    ) -> RawResponse {
        var h = [
            "X-Sentry-Auth": "Sentry sentry_key=\(publicKey)", "X-Faultline-Install-Id": install,
            "X-Faultline-Archive-Name": name, "X-Faultline-Archive-Sha256": sha ?? SHA256Hash.hex(body), "Content-Type": "application/gzip"
        ]
        if let release { h["X-Faultline-Release"] = release }
        for (k, v) in extra { h[k] = v }
        return RawHTTP.send(port: port, method: "POST", path: "/api/\(projectID)/log-archive/", headers: h, body: body, contentLength: contentLength)
    }

    func get(_ path: String) -> RawResponse {
        RawHTTP.send(port: port, method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"])
    }

    func post(_ path: String, json: JSONValue) -> RawResponse {
        RawHTTP.send(port: port, method: "POST", path: path, headers: ["Authorization": "Bearer \(token)"], body: json.serialized())
    }

    func archives() throws -> [JSONValue] {
        let r = get("/api/0/projects/\(projectID)/log-archives/?limit=1000")
        XCTAssertEqual(r.status, 200, r.text)
        return try JSONValue.parse(r.body).arrayValue ?? []
    }
}

typealias RawResponse = RawHTTP.Response

enum Corpus {
    /// One line in the file log's format.
    static func line(_ ts: String, _ level: String, _ message: String) -> String {
        "\(ts)\t\(level)\t42:43\tApp/Orders.swift:10\tplace()\t\(message)\t\n"
    }

    static func gzip(_ text: String) -> Data { Deflate.gzip(Data(text.utf8))! }

    /// Every line of every `.gz` (and `.log`) in a folder, inflated.
    static func lines(inFolder dir: String) throws -> [String] {
        var out: [String] = []
        for n in ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
            let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + n))
            if n.hasSuffix(".log.gz") {
                out += try String(decoding: Inflate.inflate(data, limit: 1 << 30), as: UTF8.self).split(separator: "\n").map(String.init)
            } else if n.hasSuffix(".log") {
                out += String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            }
        }
        return out
    }

    /// The numbers of `probe TAG line N` lines, in file order.
    static func sequence(_ lines: [String], tag: String) -> [Int] {
        lines.compactMap { l in
            guard let r = l.range(of: "probe \(tag) line ") else { return nil }
            return Int(l[r.upperBound...].prefix { $0.isNumber })
        }
    }
}

/// The test process's own memory: it hosts the server, so its peak is the server's.
enum ServerMemory {
    /// Runs `body` and returns the process's peak RSS while it ran (VmHWM, reset first through
    /// `echo 5 > /proc/self/clear_refs`, Linux ≥ 4.0) and the RSS before it, in bytes.
    static func peak(during body: () throws -> Void) throws -> (before: Int, peak: Int) {
        let reset = FileHandle(forWritingAtPath: "/proc/self/clear_refs")
        try XCTUnwrap(reset, "cannot reset VmHWM through /proc/self/clear_refs").write(contentsOf: Data("5".utf8))
        try reset?.close()
        let before = PeakMemory.highWaterMark(of: getpid()) ?? 0
        try body()
        return (before, PeakMemory.highWaterMark(of: getpid()) ?? 0)
    }
}
