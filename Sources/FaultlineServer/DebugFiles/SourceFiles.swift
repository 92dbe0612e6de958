// Source files bundled with a debug file (`faultline upload --include-sources`), served back by
// debuginfod's `/buildid/<id>/source/<path>` so gdb can show the lines around a frame.
//
// `POST /api/0/debug-files/<build-id>/sources/` `{"files": [{"path", "sha1"}…]}` (Bearer
// server token). Contents travel as chunks of the chunk-upload endpoint (one chunk per file, so
// at most 8 MiB each); the reply is `{"state": "not_found", "missingChunks": […]}` until every
// chunk is there, then `{"state": "ok", "stored": n}`. Contents are stored once per SHA-1 under
// `<data>/sources/xx/<sha1>` (shared between builds); which path of which build-id maps to which
// content is a row in the store. The path is only ever a lookup key, never a filesystem path.
import Foundation
import FaultlineProtocol
import FaultlineHashing
import FaultlineFiles

public final class SourceFiles: @unchecked Sendable {
    let records: any DebugFileRecordStore
    let chunks: ChunkUpload
    let root: String
    static let maxFiles = SourceBundle.maxFiles
    static let maxPathBytes = 4096

    public init(dataDirectory: String, records: any DebugFileRecordStore, chunks: ChunkUpload) throws {
        self.records = records
        self.chunks = chunks
        root = dataDirectory + "/sources"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func objectPath(_ sha1: String) -> String { "\(root)/\(sha1.prefix(2))/\(sha1)" }

    /// The stored contents of `path` as built into `id`, for debuginfod.
    public func lookup(_ id: BuildID, path: String) -> (file: String, size: Int64)? {
        guard let r = try? records.sourceFile(buildID: id, path: Self.normalize(path)) else { return nil }
        let file = objectPath(r.sha1)
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        return (file, r.size)
    }

    /// `//a//b` → `/a/b`: what the client sends and what gdb asks for agree on this spelling.
    static func normalize(_ p: String) -> String {
        var out = ""
        for c in p where !(c == "/" && out.last == "/") { out.append(c) }
        return out
    }

    /// A source bundle's files (SourceBundle, the file at `path`), stored as the upload endpoint
    /// stores them, one at a time; the debug file may arrive before or after (sentry-cli sends
    /// both in one assemble request). Returns the build-id they belong to.
    func storeBundle(at path: String) throws -> BuildID {
        var records: [SourceFileRecord] = []
        let buildID = try SourceBundle.read(path: path) { sourcePath, data in
            guard sourcePath.hasPrefix("/"), sourcePath.utf8.count <= Self.maxPathBytes, !sourcePath.contains("\0") else { return }
            let sha1 = SHA1Hash.hex(data)
            let object = objectPath(sha1)
            if !FileManager.default.fileExists(atPath: object) {
                try FileManager.default.createDirectory(atPath: (object as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try AtomicFile.write(data, to: object, sync: true)
            }
            records.append(SourceFileRecord(path: Self.normalize(sourcePath), sha1: sha1, size: Int64(data.count)))
        }
        try self.records.recordSourceFiles(buildID: buildID, records)
        return buildID
    }

    public func handle(_ r: HTTPRequest, buildIDHex: String) throws -> HTTPResponse {
        guard let id = BuildID(hex: buildIDHex), id.bytes.count >= 4, id.bytes.count <= 64 else { return .detail(400, "not a build-id") }
        guard try records.debugFile(buildID: id) != nil else {
            return .detail(404, "no debug file with build-id \(id.hex): upload it before its sources")
        }
        let body: JSONValue
        do { body = try JSONParser.parse(r.body) } catch { return .detail(400, "request is not JSON: \(error)") }
        guard let list = body["files"]?.arrayValue else { return .detail(400, "give {\"files\": [{\"path\", \"sha1\"}…]}") }
        guard list.count <= Self.maxFiles else { return .detail(400, "at most \(Self.maxFiles) source files per debug file") }
        var wanted: [(path: String, sha1: String)] = []
        for f in list {
            guard let path = f["path"]?.stringValue, path.hasPrefix("/"), path.utf8.count <= Self.maxPathBytes, !path.contains("\0") else {
                return .detail(400, "each source path must be absolute, at most \(Self.maxPathBytes) bytes")
            }
            guard let sha1 = f["sha1"]?.stringValue?.lowercased(), ChunkUpload.isSHA1(sha1) else { return .detail(400, "each sha1 must be 40 hex digits") }
            wanted.append((Self.normalize(path), sha1))
        }
        let missing = Set(wanted.map(\.sha1)).filter { !FileManager.default.fileExists(atPath: objectPath($0)) && !chunks.has($0) }
        if !missing.isEmpty {
            return .json(["state": "not_found", "missingChunks": .array(missing.sorted().map { .string($0) })])
        }
        var records: [SourceFileRecord] = []
        for (path, sha1) in wanted {
            let object = objectPath(sha1)
            if !FileManager.default.fileExists(atPath: object) {
                // The chunk was verified against its name when it arrived: it is the content.
                guard let data = chunks.read(sha1), SHA1Hash.hex(data) == sha1 else {
                    chunks.remove([sha1])
                    return .json(["state": "not_found", "missingChunks": [.string(sha1)]])
                }
                try FileManager.default.createDirectory(atPath: (object as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                // Synced: the upload is acknowledged as stored once this returns.
                guard (try? AtomicFile.write(data, to: object, sync: true)) != nil else { return .detail(500, "could not store a source file") }
                chunks.remove([sha1])
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: object)[.size] as? Int) ?? 0
            records.append(SourceFileRecord(path: path, sha1: sha1, size: Int64(size)))
        }
        try self.records.recordSourceFiles(buildID: id, records)
        return .json(["state": "ok", "stored": .int(Int64(records.count))])
    }
}
