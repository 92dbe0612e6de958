// `faultline upload --include-sources`: sends the source files a debug file's DWARF names, so
// the server's debuginfod `/source` endpoint can hand them to gdb. Size-capped per debug file:
// a build tree can reference the whole toolchain's headers.
import Foundation
import FaultlineSymbolication
import FaultlineProtocol
import FaultlineHashing

public struct SourceBundleOutcome: Sendable, Equatable {
    public var sent = 0
    /// Named by DWARF but not on this machine (generated, or built elsewhere).
    public var missing = 0
    /// Left out because the per-debug-file cap was reached, or a single file exceeds a chunk.
    public var overCap = 0
    public var bytes: Int64 = 0
    public var error: String?
}

public struct SourceBundler {
    let client: UploadClient
    /// Bytes of source per debug file (default 16 MiB).
    public let maxBytes: Int64

    public init(client: UploadClient, maxBytes: Int64 = 16 * 1024 * 1024) {
        self.client = client
        self.maxBytes = maxBytes
    }

    public func send(for file: UploadCandidate, options: UploadClient.Options) -> SourceBundleOutcome {
        var o = SourceBundleOutcome()
        var entries: [JSONValue] = []
        var chunks: [(sha1: String, data: Data)] = []
        for path in DWARFSourceFiles.list(path: file.path) {
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let data = FileManager.default.contents(atPath: path) else {
                o.missing += 1
                continue
            }
            guard data.count <= options.chunkSize, o.bytes + Int64(data.count) <= maxBytes else { o.overCap += 1; continue }
            let sha = SHA1Hash.hex(data)
            entries.append(["path": .string(path), "sha1": .string(sha)])
            chunks.append((sha, data))
            o.bytes += Int64(data.count)
        }
        guard !entries.isEmpty else { return o }
        let url = "/api/0/debug-files/\(file.summary.buildID.hex)/sources/"
        do {
            for _ in 0..<3 {
                let reply = try client.json("POST", url, body: ["files": .array(entries)])
                if reply["state"]?.stringValue == "ok" { o.sent = entries.count; return o }
                let missing = Set((reply["missingChunks"]?.arrayValue ?? []).compactMap(\.stringValue))
                try client.upload(chunks: chunks.filter { missing.contains($0.sha1) }, options: options)
            }
            o.error = "the server still misses source chunks after upload"
        } catch {
            o.error = "\(error)"
        }
        return o
    }
}
