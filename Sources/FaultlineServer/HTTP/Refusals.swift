// Counts of requests refused by a limit, by limit name, for /health and the log. Hostile traffic
// must not be able to fill the disk through our own log: each limit logs at most one line a
// minute to stderr (with how many it refused since the last line), and /health shows the totals.
import Foundation

public final class Refusals: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int64] = [:]
    private var unlogged: [String: Int64] = [:]
    private var lastLogged: [String: Double] = [:]
    private let log: @Sendable (String) -> Void

    public init(log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.log = log
    }

    /// Counts one refusal by `limit` (a stable name from docs/SERVER.md's table).
    public func record(_ limit: String, detail: @autoclosure () -> String = "") {
        let now = Date().timeIntervalSince1970
        lock.lock()
        counts[limit, default: 0] += 1
        unlogged[limit, default: 0] += 1
        var line: String?
        if now - (lastLogged[limit] ?? 0) >= 60 {
            let n = unlogged[limit] ?? 1
            line = "faultline: refused \(n) request(s) by limit '\(limit)' since the last report" + (detail().isEmpty ? "" : " (latest: \(detail()))")
            lastLogged[limit] = now
            unlogged[limit] = 0
        }
        lock.unlock()
        if let line { log(line) }
    }

    public var totals: [String: Int64] { lock.lock(); defer { lock.unlock() }; return counts }
}
