// Counts of requests refused by a limit, by limit name, for /health and the log. Hostile traffic
// must not be able to fill the disk through our own log: each limit logs at most one line a
// minute to stderr (with how many it refused since the last line), and /health shows the totals.
import Foundation
import Synchronization

public final class Refusals: Sendable {
    private struct Tally {
        var counts: [String: Int64] = [:]
        var unlogged: [String: Int64] = [:]
        var lastLogged: [String: Double] = [:]
        var lastRecorded: [String: Double] = [:]
    }
    private let tally = Mutex(Tally())
    private let log: @Sendable (String) -> Void

    public init(log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.log = log
    }

    /// Counts one refusal by `limit` (a stable name from docs/SERVER.md's table).
    public func record(_ limit: String, detail: @autoclosure () -> String = "") {
        let now = Date().timeIntervalSince1970
        let due: Int64? = tally.withLock { t in
            t.counts[limit, default: 0] += 1
            t.lastRecorded[limit] = now
            t.unlogged[limit, default: 0] += 1
            guard now - (t.lastLogged[limit] ?? 0) >= 60 else { return nil }
            let n = t.unlogged[limit] ?? 1
            t.lastLogged[limit] = now
            t.unlogged[limit] = 0
            return n
        }
        if let n = due {
            log("faultline: refused \(n) request(s) by limit '\(limit)' since the last report" + (detail().isEmpty ? "" : " (latest: \(detail()))"))
        }
    }

    public var totals: [String: Int64] { tally.withLock { $0.counts } }

    /// When `limit` last refused a request (seconds since 1970), nil if it never has.
    public func lastRecorded(_ limit: String) -> Double? { tally.withLock { $0.lastRecorded[limit] } }
}
