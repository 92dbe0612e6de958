// sentry-cli's chunk upload: the options GET and the multipart chunk POST. Each chunk is stored
// under the SHA-1 the server computed, after checking it equals the part's filename.
import Foundation
import FaultlineProtocol
import FaultlineHashing
import FaultlineFiles
import Synchronization

public final class ChunkUpload: Sendable {
    public static let chunkSize = 8 * 1024 * 1024
    public static let chunksPerRequest = 64
    public static let maxRequestSize = 32 * 1024 * 1024
    public static let maxFileSize: Int64 = 2 * 1024 * 1024 * 1024

    /// Chunks no assembly has used within this time are removed (sentry-cli uploads and then
    /// assembles within seconds; an abandoned upload must not hold disk forever).
    public static let defaultExpirySeconds: Double = 24 * 3600

    let directory: String
    let expirySeconds: Double
    private let lastExpiry = Mutex(0.0)

    /// - Parameter sharedDirectory: where chunks go when several servers share a debug-file
    ///   directory (`<debug-files>/.chunks`): a client's chunks may land on different nodes and
    ///   the assemble request on yet another. Nil: `<data>/chunks`, this server's own.
    public init(dataDirectory: String, sharedDirectory: String? = nil, expirySeconds: Double = ChunkUpload.defaultExpirySeconds) throws {
        directory = sharedDirectory ?? dataDirectory + "/chunks"
        self.expirySeconds = expirySeconds
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Removes partial writes (AtomicFile's temporaries, and `*.tmp-*` of older versions, left by a
    /// crash mid-write) older than a minute and chunks
    /// older than the expiry. Runs at start-up and at most every ten minutes on upload.
    @discardableResult
    public func expire(now: Double = Date().timeIntervalSince1970) -> Int {
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = "\(directory)/\(name)"
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let age = now - Double(st.st_mtim.tv_sec)
            let partial = AtomicFile.isTemporary(name) || name.contains(".tmp-")
            if age > (partial ? 60 : expirySeconds), unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    private func expireIfDue() {
        let now = Date().timeIntervalSince1970
        let due = lastExpiry.withLock { last in
            guard now - last >= 600 else { return false }
            last = now
            return true
        }
        if due { expire(now: now) }
    }

    /// `GET /api/0/organizations/<org>/chunk-upload/`.
    public func options(baseURL: String, org: String) -> JSONValue {
        [
            "url": .string("\(baseURL)/api/0/organizations/\(org)/chunk-upload/"),
            "chunkSize": .int(Int64(Self.chunkSize)),
            "chunksPerRequest": .int(Int64(Self.chunksPerRequest)),
            "maxFileSize": .int(Self.maxFileSize),
            "maxRequestSize": .int(Int64(Self.maxRequestSize)),
            "concurrency": 4,
            "hashAlgorithm": "sha1",
            "compression": ["gzip"],
            "accept": ["debug_files"]
        ]
    }

    /// A chunk's path; `sha1` must already be validated 40-hex (we computed it).
    func path(_ sha1: String) -> String { "\(directory)/\(sha1)" }

    /// 40 ASCII hex digits. (`Character.isHexDigit` also accepts fullwidth digits such as "０",
    /// which would put non-ASCII names on disk and break the equality with our own hashes.)
    public static func isSHA1(_ s: String) -> Bool {
        s.utf8.count == 40 && s.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    public func has(_ sha1: String) -> Bool {
        Self.isSHA1(sha1) && FileManager.default.fileExists(atPath: path(sha1.lowercased()))
    }

    public func read(_ sha1: String) -> Data? {
        guard Self.isSHA1(sha1) else { return nil }
        return FileManager.default.contents(atPath: path(sha1.lowercased()))
    }

    /// `POST` of one or more chunks. Returns 200 with nothing, or 400 with what was wrong; chunks
    /// before a bad one are kept (they are content-addressed, so keeping them is harmless).
    public func receive(_ request: HTTPRequest) -> HTTPResponse {
        expireIfDue()
        let parts: [MultipartPart]
        do { parts = try Multipart.parse(request.body, contentType: request.header("content-type"), maxParts: Self.chunksPerRequest) } catch {
            return .detail(400, error.description)
        }
        guard !parts.isEmpty else { return .detail(400, "no chunks in the request") }
        for (i, part) in parts.enumerated() {
            guard let claimed = part.filename?.lowercased(), Self.isSHA1(claimed) else {
                return .detail(400, "chunk \(i): the part's filename must be the chunk's SHA-1 (40 hex digits)")
            }
            var data = part.body
            if part.name == "file_gzip" || part.contentType?.lowercased().contains("gzip") == true {
                do { data = try Inflate.inflate(data, limit: Self.chunkSize) } catch { return .detail(400, "chunk \(i): \(error)") }
            }
            guard data.count <= Self.chunkSize else { return .detail(400, "chunk \(i) is larger than \(Self.chunkSize) bytes") }
            let actual = SHA1Hash.hex(data)
            guard actual == claimed else { return .detail(400, "chunk \(i): SHA-1 is \(actual), not \(claimed) as named") }
            // Synced: a chunk the client is told is stored is not asked for again.
            guard (try? AtomicFile.write(data, to: path(actual), sync: true)) != nil else { return .detail(500, "could not store chunk \(i)") }
        }
        return HTTPResponse(status: 200)
    }

    public func remove(_ sha1s: [String]) {
        for s in sha1s where Self.isSHA1(s) { try? FileManager.default.removeItem(atPath: path(s.lowercased())) }
    }
}
