// `GET /api/0/debug-files/status/?build_ids=<hex>,<hex>…` (Bearer server token): for each
// build-id, whether its debug file is installed and where the backfill it started stands. This
// is what `faultline upload --wait` polls; the same token that uploads may ask.
import Foundation
import FaultlineProtocol

public struct DebugFileStatus: Sendable {
    let records: any DebugFileRecordStore
    let jobs: any BackfillJobs
    let files: DebugFileStore
    let backfiller: Backfiller

    /// Bounds the work of one request (the client sends batches of 100).
    static let maxIDs = 100

    public func handle(_ r: HTTPRequest) throws -> HTTPResponse {
        let raw = (r.query["build_ids"] ?? r.query["build_id"] ?? "").split(separator: ",").map(String.init)
        guard !raw.isEmpty else { return .detail(400, "give build_ids=<hex>,<hex>…") }
        guard raw.count <= Self.maxIDs else { return .detail(400, "at most \(Self.maxIDs) build-ids per request") }
        var out: [JSONValue] = []
        for hex in raw {
            guard let id = BuildID(hex: hex), id.bytes.count >= 4, id.bytes.count <= 64 else { return .detail(400, "'\(hex.prefix(140))' is not a build-id") }
            out.append(try status(id))
        }
        return .json(["files": .array(out)])
    }

    func status(_ id: BuildID) throws -> JSONValue {
        let record = try records.debugFile(buildID: id)
        let installed =
            record != nil
            && (FileManager.default.fileExists(atPath: files.debugInfoPath(id))
                || FileManager.default.fileExists(atPath: files.executablePath(id)))
        var backfill: JSONValue = ["state": "none"]
        switch backfiller.progress(of: id) {
        case .queued: backfill = ["state": "queued"]
        case .running: backfill = ["state": "running"]
        case .idle:
            if let b = try jobs.latestBackfill(buildID: id) {
                // A record left "running" or "queued" by a server that was killed is re-run at
                // start; while idle here it can only be a run that has not been picked up.
                backfill = [
                    "state": .string(b.state), "occurrences": .int(b.occurrences),
                    "occurrences_symbolicated": .int(b.occurrencesSymbolicated),
                    "issues_merged": .array(b.merges.map { ["issue": .string(String($0.issue)), "into": .string(String($0.into))] }),
                    "error": b.error.map { .string($0) } ?? .null
                ]
            }
        }
        return [
            "build_id": .string(id.hex), "installed": .bool(installed),
            "has_debug_info": .bool(record?.hasDebugInfo ?? false), "backfill": backfill
        ]
    }
}
