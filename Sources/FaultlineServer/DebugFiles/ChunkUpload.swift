// sentry-cli's chunk upload: the options GET and the multipart chunk POST. Each chunk is stored
// under the SHA-1 the server computed, after checking it equals the part's filename.
import Foundation
import FaultlineProtocol

public final class ChunkUpload: @unchecked Sendable {
    public static let chunkSize = 8 * 1024 * 1024
    public static let chunksPerRequest = 64
    public static let maxRequestSize = 32 * 1024 * 1024
    public static let maxFileSize: Int64 = 2 * 1024 * 1024 * 1024

    let directory: String

    public init(dataDirectory: String) throws {
        directory = dataDirectory + "/chunks"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
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
            "accept": ["debug_files"],
        ]
    }

    /// A chunk's path; `sha1` must already be validated 40-hex (we computed it).
    func path(_ sha1: String) -> String { "\(directory)/\(sha1)" }

    public static func isSHA1(_ s: String) -> Bool { s.utf8.count == 40 && s.allSatisfy { $0.isHexDigit } }

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
        let parts: [MultipartPart]
        do { parts = try Multipart.parse(request.body, contentType: request.header("content-type")) }
        catch { return .detail(400, error.description) }
        guard !parts.isEmpty else { return .detail(400, "no chunks in the request") }
        guard parts.count <= Self.chunksPerRequest else { return .detail(400, "at most \(Self.chunksPerRequest) chunks per request") }
        for (i, part) in parts.enumerated() {
            guard let claimed = part.filename?.lowercased(), Self.isSHA1(claimed) else {
                return .detail(400, "chunk \(i): the part's filename must be the chunk's SHA-1 (40 hex digits)")
            }
            var data = part.body
            if part.name == "file_gzip" || part.contentType?.lowercased().contains("gzip") == true {
                do { data = try Inflate.inflate(data, limit: Self.chunkSize) }
                catch { return .detail(400, "chunk \(i): \(error)") }
            }
            guard data.count <= Self.chunkSize else { return .detail(400, "chunk \(i) is larger than \(Self.chunkSize) bytes") }
            let actual = SHA1Hash.hex(data)
            guard actual == claimed else { return .detail(400, "chunk \(i): SHA-1 is \(actual), not \(claimed) as named") }
            let tmp = path(actual) + ".tmp-\(UUID().uuidString)"
            guard FileManager.default.createFile(atPath: tmp, contents: data), rename(tmp, path(actual)) == 0 else {
                try? FileManager.default.removeItem(atPath: tmp)
                return .detail(500, "could not store chunk \(i)")
            }
        }
        return HTTPResponse(status: 200)
    }

    public func remove(_ sha1s: [String]) {
        for s in sha1s where Self.isSHA1(s) { try? FileManager.default.removeItem(atPath: path(s.lowercased())) }
    }
}
