// The per-file upload flow: chunk and hash, probe with assemble, send missing chunks, assemble.
import Foundation
import FaultlineProtocol
import FaultlineHashing

/// What happened to one file of a run.
public struct FileOutcome: Sendable {
    public enum State: String, Sendable { case uploaded, present, failed }
    public var candidate: UploadCandidate
    public var state: State
    public var error: String?
    /// Filled by `UploadWaiter` when the run waited for the server.
    public var backfill: BackfillOutcome?
    /// Filled when the run bundled sources (`--include-sources`) and the file has DWARF.
    public var sources: SourceBundleOutcome?
}

public struct Uploader {
    let client: UploadClient
    /// Set to send each debug file's sources after it (`--include-sources`).
    public var sources: SourceBundler?
    /// Called after each file (the CLI draws its progress bar or prints a line).
    let onFile: (FileOutcome) -> Void

    public init(client: UploadClient, onFile: @escaping (FileOutcome) -> Void = { _ in }) {
        self.client = client
        self.onFile = onFile
    }

    /// Uploads every candidate. Throws only when nothing could be tried (no options from the
    /// server); a file that fails is an outcome, and the others still go.
    public func run(_ files: [UploadCandidate]) throws -> [FileOutcome] {
        let options = try client.options()
        var out: [FileOutcome] = []
        for f in files {
            var o: FileOutcome
            do {
                o = FileOutcome(candidate: f, state: try upload(f, options) ? .uploaded : .present)
                if let sources, f.summary.hasDebugInfo { o.sources = sources.send(for: f, options: options) }
            } catch {
                o = FileOutcome(candidate: f, state: .failed, error: "\(error)")
            }
            onFile(o)
            out.append(o)
        }
        return out
    }

    /// True when chunks were sent, false when the server already had the file.
    func upload(_ f: UploadCandidate, _ o: UploadClient.Options) throws -> Bool {
        guard let fh = FileHandle(forReadingAtPath: f.path) else { throw UploadClientError(description: "cannot read") }
        defer { try? fh.close() }
        var chunks: [(sha1: String, data: Data)] = []
        let whole = SHA1Hash.Hasher()
        while let data = try fh.read(upToCount: o.chunkSize), !data.isEmpty {
            whole.update(data)
            chunks.append((SHA1Hash.hex(data), data))
        }
        let checksum = whole.finalizeHex()
        let spec: JSONValue = [
            "name": .string((f.path as NSString).lastPathComponent),
            "debug_id": .string(f.summary.buildID.debugID.description),
            "chunks": .array(chunks.map { .string($0.sha1) })
        ]
        var didUpload = false
        for attempt in 0..<60 {
            let reply = try client.assemble([checksum: spec])[checksum] ?? .null
            let state = reply["state"]?.stringValue ?? "?"
            switch state {
            case "ok": return didUpload
            case "error": throw UploadClientError(description: reply["detail"]?.stringValue ?? "server refused the file")
            case "not_found":
                let missing = Set((reply["missingChunks"]?.arrayValue ?? []).compactMap(\.stringValue))
                guard !missing.isEmpty, !didUpload || attempt < 2 else { throw UploadClientError(description: "server still misses chunks after upload") }
                try client.upload(chunks: chunks.filter { missing.contains($0.sha1) }, options: o)
                didUpload = true
            default:
                Thread.sleep(forTimeInterval: 0.5)  // created / assembling (other servers): poll
            }
        }
        throw UploadClientError(description: "server did not finish assembling in time")
    }
}
