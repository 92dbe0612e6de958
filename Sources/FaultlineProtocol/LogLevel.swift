// Log severity: the one table of level names — the SDK's loggers, its file log, what it sends to
// Sentry, `faultline console --level`, `faultline logs top --level`, the server's log API and
// the logs page all read it.

/// Severity, with swift-log's level names and order. Sentry knows fewer levels: `trace` is sent
/// as `debug`, `notice` as `info`, `critical` as `fatal`.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
    public static func < (l: LogLevel, r: LogLevel) -> Bool { l.rawValue < r.rawValue }

    /// The name as `faultline console --level` and the SDK's attributes (`log.level`) spell it.
    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// The name as the file log writes it (capitals; `LogLineFormat`).
    public var fileLogName: StaticString {
        switch self {
        case .trace: "TRACE"
        case .debug: "DEBUG"
        case .info: "INFO"
        case .notice: "NOTICE"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .critical: "CRITICAL"
        }
    }

    /// The name the SDK sends in breadcrumbs and log items (Sentry's level names).
    public var sentryName: StaticString {
        switch self {
        case .trace, .debug: "debug"
        case .info, .notice: "info"
        case .warning: "warning"
        case .error: "error"
        case .critical: "fatal"
        }
    }

    /// Parses a level name in any case: the names above, and the aliases other Sentry clients
    /// send (`warn` for warning, `fatal` for critical).
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

    /// The file log's names in order, for help texts and error messages.
    public static var fileLogNames: [String] { allCases.map { "\($0.fileLogName)" } }

    /// The distinct names the SDK sends, lowest first (what a filter of sent log items offers).
    public static var sentryNames: [String] {
        var names: [String] = []
        for level in allCases where !names.contains("\(level.sentryName)") { names.append("\(level.sentryName)") }
        return names
    }

    /// The Sentry name a sent level means (`warn` → `warning`, `trace` → `debug`); nil when the
    /// name is no level.
    public static func sentryName(of name: String) -> String? { LogLevel(name: name).map { "\($0.sentryName)" } }
}
