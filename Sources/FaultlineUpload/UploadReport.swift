// The outcome of one `faultline upload` run: the one-line summary, the `--json` document and the
// exit code, decided in one place so the three never disagree.
import Foundation
import FaultlineProtocol

public struct UploadReport: Sendable {
    public var files: [FileOutcome]
    public var scan: DebugFileScan
    /// nil when the run did not wait.
    public var wait: UploadWaiter.Ending?
    public var waitSeconds: Double?

    public init(files: [FileOutcome], scan: DebugFileScan, wait: UploadWaiter.Ending? = nil, waitSeconds: Double? = nil) {
        self.files = files
        self.scan = scan
        self.wait = wait
        self.waitSeconds = waitSeconds
    }

    /// Exit codes a CI script can rely on (documented in `faultline upload --help` and README).
    public enum Exit: Int32, Sendable {
        case ok = 0
        /// Server or network failure before or during every file: nothing is sure.
        case failure = 1
        case usage = 2
        /// A path is missing or there is nothing to upload.
        case input = 3
        /// Some files failed, others are on the server.
        case partial = 4
        /// Every file is on the server, but a backfill it started failed (`--wait`).
        case backfillFailed = 5
        /// Every file is on the server, but `--wait` ran out of time before the backfills ended.
        case waitTimedOut = 6
    }

    public func count(_ s: FileOutcome.State) -> Int { files.filter { $0.state == s }.count }
    /// One backfill per build-id: a debug file and the executable sent beside it report the same.
    private var backfillsByBuildID: [BackfillOutcome] {
        var seen = Set<BuildID>()
        return files.compactMap { f in seen.insert(f.candidate.summary.buildID).inserted ? f.backfill : nil }
    }
    public var occurrencesSymbolicated: Int64 { backfillsByBuildID.reduce(0) { $0 + $1.occurrencesSymbolicated } }
    public var issuesMerged: [IssueMerge] { backfillsByBuildID.flatMap(\.issuesMerged) }
    public var backfillsFailed: Int { files.filter { $0.backfill?.state == "failed" }.count }

    public var exit: Exit {
        let failed = count(.failed)
        if failed > 0 { return failed == files.count ? .failure : .partial }
        if files.contains(where: { $0.sources?.error != nil }) { return .partial }
        if backfillsFailed > 0 { return .backfillFailed }
        if wait == .timedOut { return .waitTimedOut }
        return .ok
    }

    public var summaryLines: [String] {
        var s = "\(count(.uploaded)) uploaded, \(count(.present)) already on the server, \(count(.failed)) failed"
        if !scan.skippedDescription.isEmpty { s += "; skipped \(scan.skippedDescription)" }
        var lines = [s]
        let bundles = files.compactMap(\.sources)
        if !bundles.isEmpty {
            var b = "sources: \(bundles.reduce(0) { $0 + $1.sent }) sent (\(bundles.reduce(0) { $0 + $1.bytes }) bytes)"
            let missing = bundles.reduce(0) { $0 + $1.missing }, over = bundles.reduce(0) { $0 + $1.overCap }
            if missing > 0 { b += ", \(missing) not on this machine" }
            if over > 0 { b += ", \(over) over the size cap" }
            lines.append(b)
            for f in files { if let e = f.sources?.error { lines.append("sources FAILED for \(f.candidate.path): \(e)") } }
        }
        switch wait {
        case .none: break
        case .timedOut?: lines.append("gave up waiting after \(String(format: "%.1f", waitSeconds ?? 0)) s: the server is still installing or backfilling")
        case .finished?:
            var w = "backfill finished in \(String(format: "%.1f", waitSeconds ?? 0)) s: \(occurrencesSymbolicated) earlier occurrence(s) symbolicated"
            let merges = issuesMerged
            w += merges.isEmpty ? ", no issues merged" : ", issues merged: " + merges.map { "\($0.issue) → \($0.into)" }.joined(separator: ", ")
            lines.append(w)
            for f in files where f.backfill?.state == "failed" {
                lines.append("backfill FAILED for \(f.candidate.summary.buildID.hex) \(f.candidate.path): \(f.backfill?.error ?? "see the server's log")")
            }
        }
        return lines
    }

    public var json: JSONValue {
        var skipped: [String: JSONValue] = [:]
        for r in SkipReason.allCases { skipped[r.rawValue] = .int(Int64(scan.skipped[r] ?? 0)) }
        let fileList: [JSONValue] = files.map { f in
            var o: [String: JSONValue] = [
                "path": .string(f.candidate.path), "build_id": .string(f.candidate.summary.buildID.hex),
                "debug_id": .string(f.candidate.summary.buildID.debugID.description), "size": .int(f.candidate.size),
                "state": .string(f.state.rawValue), "error": f.error.map { .string($0) } ?? .null
            ]
            if let s = f.sources {
                o["sources"] = [
                    "sent": .int(Int64(s.sent)), "bytes": .int(s.bytes), "missing": .int(Int64(s.missing)),
                    "over_cap": .int(Int64(s.overCap)), "error": s.error.map { .string($0) } ?? .null
                ]
            }
            if let b = f.backfill {
                o["backfill"] = [
                    "state": .string(b.state), "occurrences_symbolicated": .int(b.occurrencesSymbolicated),
                    "issues_merged": .array(b.issuesMerged.map(Self.mergeJSON)), "error": b.error.map { .string($0) } ?? .null
                ]
            }
            return .object(o)
        }
        var waitJSON: JSONValue = .null
        if let wait {
            waitJSON = [
                "state": .string(backfillsFailed > 0 ? "backfill_failed" : wait.rawValue),
                "seconds": .double(waitSeconds ?? 0), "occurrences_symbolicated": .int(occurrencesSymbolicated),
                "issues_merged": .array(issuesMerged.map(Self.mergeJSON))
            ]
        }
        return [
            "files": .array(fileList), "uploaded": .int(Int64(count(.uploaded))), "present": .int(Int64(count(.present))),
            "failed": .int(Int64(count(.failed))), "skipped": .object(skipped), "wait": waitJSON,
            "exit_code": .int(Int64(exit.rawValue))
        ]
    }

    static func mergeJSON(_ m: IssueMerge) -> JSONValue { ["issue": .string(m.issue), "into": .string(m.into)] }
}
