// Sentry's X-Sentry-Rate-Limits: which item categories may not be sent until when.
import Foundation
import FaultlineProtocol

/// Sentry's `X-Sentry-Rate-Limits: <seconds>:<categories>:<scope>, …` and per-category deadlines.
struct RateLimits: Sendable {
    typealias Limit = RateLimitHeader.Limit
    private(set) var until: [String: Double] = [:]  // "" means all categories
    /// The longest any one answer may silence the SDK: a server's `Retry-After: inf` or `1e9`
    /// (a bug, or a hostile answer) must not stop sending until a restart. An hour is far beyond
    /// what a server under load asks for (seconds to minutes), and the worst a wrong value costs.
    static let longestLimit: Double = 3600

    static func parse(header: String?) -> [Limit] { RateLimitHeader.parse(header) }

    mutating func apply(_ limits: [Limit], now: Double) {
        for l in limits {
            // Not a number counts as the longest (the server meant to limit), a negative as none.
            let seconds = l.seconds.isNaN ? Self.longestLimit : min(max(l.seconds, 0), Self.longestLimit)
            for c in (l.categories.isEmpty ? [""] : l.categories) { until[c] = max(until[c] ?? 0, now + seconds) }
        }
    }

    /// Whether an envelope with these item types may be sent now.
    func allows(itemTypes: [String], now: Double) -> Bool {
        if let all = until[""], all > now { return false }
        return !itemTypes.contains { t in (until[Self.category(of: t)] ?? 0) > now }
    }

    static func category(of itemType: String) -> String { DataCategory.of(itemType: itemType) }
}
