// `faultline upload --wait`: polls the server until every file of the run is installed and the
// backfills the uploads started have finished (or failed), or until the timeout. A poll that fails
// for a passing reason (no connection, a 5xx) is tried again until then.
import Foundation
import FaultlineProtocol

/// The server's backfill for one build-id, as `GET /api/0/debug-files/status/` reports it.
public struct BackfillOutcome: Sendable, Equatable {
    /// `queued`, `running`, `done`, `failed`, or `none` (a file without DWARF or symbols starts none).
    public var state: String
    /// Earlier occurrences whose crashing stack now resolves through this file.
    public var occurrencesSymbolicated: Int64
    /// Issues that backfill emptied into another: (merged issue id, surviving issue id).
    public var issuesMerged: [IssueMerge]
    public var error: String?

    public var isFinished: Bool { state == "done" || state == "failed" || state == "none" }

    init(_ j: JSONValue) {
        state = j["state"]?.stringValue ?? "none"
        occurrencesSymbolicated = j["occurrences_symbolicated"]?.int64Value ?? 0
        issuesMerged = (j["issues_merged"]?.arrayValue ?? []).compactMap { m in
            guard let from = m["issue"]?.stringValue, let into = m["into"]?.stringValue else { return nil }
            return IssueMerge(issue: from, into: into)
        }
        error = j["error"]?.stringValue
    }
}

public struct IssueMerge: Sendable, Equatable {
    public var issue: String
    public var into: String
}

public struct UploadWaiter {
    let client: UploadClient
    let timeout: TimeInterval
    let pollInterval: TimeInterval

    public init(client: UploadClient, timeout: TimeInterval, pollInterval: TimeInterval = 0.25) {
        self.client = client
        self.timeout = timeout
        self.pollInterval = pollInterval
    }

    public enum Ending: String, Sendable { case finished, timedOut = "timed_out" }

    /// Fills `backfill` on every uploaded or present file. Files already on the server are waited
    /// for too (a backfill from an earlier, interrupted run may still be going), but only the
    /// files this run uploaded get their counts reported: a present file's backfill is not this
    /// run's doing.
    public func wait(_ outcomes: inout [FileOutcome]) throws -> Ending {
        let deadline = Date().addingTimeInterval(timeout)
        let ids = outcomes.filter { $0.state != .failed }.map(\.candidate.summary.buildID)
        while true {
            let status: [BuildID: JSONValue]
            do {
                // A poll never outlasts the wait: a server that stopped answering costs what is
                // left of the timeout, not a request's own 300 s.
                status = try client.status(ids, timeout: max(1, deadline.timeIntervalSinceNow))
            } catch let e as UploadClientError where e.isTransient {
                // The files are on the server already: a restart or a node going away while it
                // installs them is no reason to stop waiting. Given up only at the deadline.
                if Date() >= deadline { throw e }
                Thread.sleep(forTimeInterval: pollInterval)
                continue
            }
            var finished = true
            for i in outcomes.indices where outcomes[i].state != .failed {
                let s = status[outcomes[i].candidate.summary.buildID]
                let installed = s?["installed"]?.boolValue ?? false
                var b = BackfillOutcome(s?["backfill"] ?? .null)
                if outcomes[i].state == .present, b.isFinished {
                    b = BackfillOutcome(state: b.state == "failed" ? "failed" : "done", occurrencesSymbolicated: 0, issuesMerged: [], error: b.error)
                }
                outcomes[i].backfill = b
                if !installed || !b.isFinished { finished = false }
            }
            if finished { return .finished }
            if Date() >= deadline { return .timedOut }
            Thread.sleep(forTimeInterval: pollInterval)
        }
    }
}

extension BackfillOutcome {
    init(state: String, occurrencesSymbolicated: Int64, issuesMerged: [IssueMerge], error: String?) {
        self.state = state
        self.occurrencesSymbolicated = occurrencesSymbolicated
        self.issuesMerged = issuesMerged
        self.error = error
    }
}
