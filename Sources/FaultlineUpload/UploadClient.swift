// The client side of sentry-cli's chunk-upload protocol, over URLSession.
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import FaultlineProtocol

public struct UploadClientError: Error, CustomStringConvertible {
    public let description: String
    /// A failure that asking again may mend: no connection or no answer, a 5xx, 408 or 429 (a
    /// server restarting, a balancer between nodes). A 4xx otherwise is the request's own fault.
    public let isTransient: Bool
    public init(description: String, isTransient: Bool = false) {
        self.description = description
        self.isTransient = isTransient
    }

    static func isTransient(status: Int) -> Bool { status >= 500 || status == 408 || status == 429 }
}

public final class UploadClient: @unchecked Sendable {
    public let base: String
    let token: String
    public let org: String
    public let project: String
    let session: URLSession

    public struct Options: Sendable {
        public var url: String
        public var chunkSize: Int
        public var chunksPerRequest: Int
        public var maxRequestSize: Int
        public var gzip: Bool
    }

    public init(base: String, token: String, org: String, project: String) {
        var b = base
        while b.hasSuffix("/") { b.removeLast() }
        self.base = b
        self.token = token
        self.org = org
        self.project = project
        let cfg = URLSessionConfiguration.ephemeral
        cfg.timeoutIntervalForRequest = 300
        session = URLSession(configuration: cfg)
    }

    /// One synchronous request; returns status and body.
    func send(_ method: String, _ url: String, body: Data? = nil, contentType: String? = nil, timeout: TimeInterval? = nil) throws -> (Int, Data) {
        guard let u = URL(string: url.hasPrefix("http") ? url : base + url) else { throw UploadClientError(description: "bad URL \(url)") }
        var req = URLRequest(url: u)
        if let timeout { req.timeoutInterval = timeout }
        req.httpMethod = method
        req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let contentType { req.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        req.httpBody = body
        let sem = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Int, Data)?
        nonisolated(unsafe) var failure: Error?
        session.dataTask(with: req) { data, response, error in
            if let error { failure = error } else { result = ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()) }
            sem.signal()
        }.resume()
        sem.wait()
        if let failure { throw UploadClientError(description: "\(method) \(u.absoluteString): \(failure.localizedDescription)", isTransient: true) }
        return result!
    }

    public func json(_ method: String, _ url: String, body: JSONValue? = nil, timeout: TimeInterval? = nil) throws -> JSONValue {
        let (status, data) = try send(method, url, body: body?.serialized(), contentType: body == nil ? nil : "application/json", timeout: timeout)
        let value = try? JSONValue.parse(data)
        guard (200..<300).contains(status) else {
            let detail = value?["detail"]?.stringValue ?? String(decoding: data.prefix(300), as: UTF8.self)
            throw UploadClientError(description: "\(method) \(url) → HTTP \(status): \(detail)", isTransient: UploadClientError.isTransient(status: status))
        }
        guard let value else { throw UploadClientError(description: "\(method) \(url): response is not JSON") }
        return value
    }

    public func options() throws -> Options {
        let o = try json("GET", "/api/0/organizations/\(org)/chunk-upload/")
        guard let url = o["url"]?.stringValue else { throw UploadClientError(description: "server did not say where to send chunks") }
        return Options(
            url: url, chunkSize: Int(o["chunkSize"]?.int64Value ?? 8_388_608),
            chunksPerRequest: Int(o["chunksPerRequest"]?.int64Value ?? 64),
            maxRequestSize: Int(o["maxRequestSize"]?.int64Value ?? 33_554_432),
            gzip: o["compression"]?.arrayValue?.contains("gzip") ?? false)
    }

    /// Install and backfill state of each build-id (`GET /api/0/debug-files/status/`), what
    /// `--wait` polls. The server answers for at most 100 ids per request.
    /// `timeout`: the most one request may take (`--wait`'s deadline bounds each poll).
    public func status(_ ids: [BuildID], timeout: TimeInterval? = nil) throws -> [BuildID: JSONValue] {
        var out: [BuildID: JSONValue] = [:]
        var i = 0
        while i < ids.count {
            let slice = ids[i..<min(i + 100, ids.count)]
            let reply = try json("GET", "/api/0/debug-files/status/?build_ids=" + slice.map(\.hex).joined(separator: ","), timeout: timeout)
            for f in reply["files"]?.arrayValue ?? [] {
                if let id = f["build_id"]?.stringValue.flatMap(BuildID.init(hex:)) { out[id] = f }
            }
            i += 100
        }
        return out
    }

    func assemble(_ files: [String: JSONValue]) throws -> JSONValue {
        try json("POST", "/api/0/projects/\(org)/\(project)/files/difs/assemble/", body: .object(files))
    }

    /// Sends chunks in as few multipart requests as the server's limits allow.
    public func upload(chunks: [(sha1: String, data: Data)], options o: Options) throws {
        var batch: [(String, Data)] = []
        var batchBytes = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            let boundary = "faultline-\(UUID().uuidString)"
            var body = Data()
            for (sha, data) in batch {
                body.append(
                    Data(
                        "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(o.gzip ? "file_gzip" : "file")\"; filename=\"\(sha)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                            .utf8))
                body.append(data)
                body.append(Data("\r\n".utf8))
            }
            body.append(Data("--\(boundary)--\r\n".utf8))
            let (status, resp) = try send("POST", o.url, body: body, contentType: "multipart/form-data; boundary=\(boundary)")
            guard (200..<300).contains(status) else {
                let detail = (try? JSONValue.parse(resp))?["detail"]?.stringValue ?? String(decoding: resp.prefix(300), as: UTF8.self)
                throw UploadClientError(description: "chunk upload → HTTP \(status): \(detail)")
            }
            batch.removeAll(); batchBytes = 0
        }
        for (sha, raw) in chunks {
            var data = raw
            if o.gzip {
                guard let gz = Deflate.gzip(raw) else { throw UploadClientError(description: "could not gzip chunk \(sha) (zlib failed)") }
                data = gz
            }
            if !batch.isEmpty && (batch.count >= o.chunksPerRequest || batchBytes + data.count > o.maxRequestSize) { try flush() }
            batch.append((sha, data)); batchBytes += data.count
        }
        try flush()
    }
}
