// Log severity: one scale for the SDK's loggers, its file log and `faultline console --level`.

/// Severity, with swift-log's level names and order. Sentry knows fewer levels: `trace` is sent
/// as `debug` in breadcrumbs, `notice` as `info`, `critical` as `fatal`.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
    public static func < (l: LogLevel, r: LogLevel) -> Bool { l.rawValue < r.rawValue }
    /// The name as written in file logs and accepted by `faultline console --level`.
    public var name: String {
        switch self {
        case .trace: "trace";
        case .debug: "debug";
        case .info: "info";
        case .notice: "notice"
        case .warning: "warning";
        case .error: "error";
        case .critical: "critical"
        }
    }
    /// Parses a level name (case-insensitive; `warn` and `fatal` accepted too).
    public init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error": self = .error
        case "critical", "fatal": self = .critical
        default: return nil
        }
    }
}
