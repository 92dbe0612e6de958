// An alert rule: where to tell (a channel and its target), when (triggers) and about what
// (filters on environment, level and release). Rules are per project.
import Foundation

/// Where an alert goes.
public enum AlertChannel: String, Sendable, CaseIterable {
    /// A JSON POST of the documented generic payload (docs/SERVER.md, "Alerts").
    case webhook
    /// A JSON POST in Slack's incoming-webhook form (`text` and `blocks`).
    case slack
    /// An email through the server's SMTP relay (`faultline serve --smtp`).
    case email
}

/// When a rule fires.
public enum AlertTrigger: Sendable, Hashable {
    /// The first occurrence of an issue.
    case newIssue
    /// A resolved issue occurred again in a release not older than its fix (or an ignored one came back).
    case regression
    /// At least `count` occurrences of one issue within `minutes`.
    case frequency(count: Int, minutes: Int)
    /// An issue this rule alerted about while it was unsymbolicated has been named by a late
    /// debug file (backfill): the readable alert follows the first one.
    case symbolicated
    /// A release's crash-free session rate over the last `minutes` fell below `percent`
    /// (with at least `AlertEvaluator.minimumSessions` sessions in the window).
    case crashFree(percent: Double, minutes: Int)

    /// The command-line and storage spelling: `new-issue`, `regression`, `frequency:N/M`, `symbolicated`.
    public var spelling: String {
        switch self {
        case .newIssue: "new-issue"
        case .regression: "regression"
        case .frequency(let n, let m): "frequency:\(n)/\(m)"
        case .symbolicated: "symbolicated"
        case .crashFree(let p, let m): "crash-free:\(Self.number(p))/\(m)"
        }
    }

    private static func number(_ d: Double) -> String { d == d.rounded() ? String(Int(d)) : String(d) }

    public init?(spelling s: String) {
        switch s {
        case "new-issue": self = .newIssue
        case "regression": self = .regression
        case "symbolicated": self = .symbolicated
        default:
            if s.hasPrefix("crash-free:") {
                let parts = s.dropFirst("crash-free:".count).split(separator: "/")
                guard let p = parts.first.flatMap({ Double($0) }), p > 0, p <= 100 else { return nil }
                let m = parts.count == 2 ? Int(parts[1]) : 60
                guard let m, m > 0, m <= 10_080, parts.count <= 2 else { return nil }
                self = .crashFree(percent: p, minutes: m)
                return
            }
            guard s.hasPrefix("frequency:") else { return nil }
            let parts = s.dropFirst("frequency:".count).split(separator: "/")
            guard parts.count == 2, let n = Int(parts[0]), let m = Int(parts[1]), n > 0, m > 0, n <= 1_000_000, m <= 10_080 else { return nil }
            self = .frequency(count: n, minutes: m)
        }
    }

    /// Parses a comma-separated list; nil names the first bad entry.
    public static func parseList(_ s: String) -> Result<[AlertTrigger], AlertRuleError> {
        var out: [AlertTrigger] = []
        for part in s.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            guard let t = AlertTrigger(spelling: part) else { return .failure(.badTrigger(part)) }
            if !out.contains(t) { out.append(t) }
        }
        return out.isEmpty ? .failure(.badTrigger(s)) : .success(out)
    }
}

/// What a rule refuses to be.
public enum AlertRuleError: Error, CustomStringConvertible, Equatable {
    case badTrigger(String)
    case badTarget(String)

    public var description: String {
        switch self {
        case .badTrigger(let t):
            "unknown trigger '\(t)': use new-issue, regression, frequency:N/M (N events in M minutes), crash-free:P/M (a release's crash-free sessions below P % over M minutes) or symbolicated"
        case .badTarget(let t): t
        }
    }
}

public struct AlertRule: Sendable, Equatable {
    public var id: Int64
    public var projectID: Int64
    public var channel: AlertChannel
    /// The webhook URL, or the email address.
    public var target: String
    public var triggers: [AlertTrigger]
    /// Only occurrences with this environment, level or release (nil: any).
    public var environment: String?
    public var level: String?
    public var release: String?
    public var created: Double

    public init(
        id: Int64 = 0, projectID: Int64, channel: AlertChannel, target: String, triggers: [AlertTrigger],
        environment: String? = nil, level: String? = nil, release: String? = nil, created: Double = 0
    ) {
        self.id = id; self.projectID = projectID; self.channel = channel; self.target = target; self.triggers = triggers
        self.environment = environment; self.level = level; self.release = release; self.created = created
    }

    /// Refuses what must never be stored: a webhook to anything but http(s), a malformed address.
    public static func validate(channel: AlertChannel, target: String) -> AlertRuleError? {
        guard target.utf8.count <= 2048, !target.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            return .badTarget("the target is too long or holds control characters")
        }
        switch channel {
        case .webhook, .slack:
            guard let u = URLComponents(string: target), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = u.host, !host.isEmpty
            else {
                return .badTarget("a webhook must be an http:// or https:// URL with a host: \(target)")
            }
            // A port no connection can use is refused now, not at every send.
            if let port = u.port, !(1...65535).contains(port) { return .badTarget("port \(port) is not a TCP port (1–65535): \(target)") }
            return nil
        case .email:
            let parts = target.split(separator: "@")
            guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !target.contains(where: { $0 == " " || $0 == "<" || $0 == ">" || $0 == "," })
            else {
                return .badTarget("not an email address: \(target)")
            }
            return nil
        }
    }

    var needsEventFields: Bool { environment != nil || level != nil }
}

/// What a delivery tells.
public enum AlertKind: String, Sendable {
    case newIssue = "new_issue", regression, unmuted, frequency, digest, symbolicated, test
    case crashFree = "crash_free"
}
