// When and how log lines are coloured on a terminal: one rule for the SDK's console logger and
// `faultline console`.
import FoundationEssentials
import Glibc

public enum LogColour {
    /// The NO_COLOR + isatty rule.
    public static func wanted(fileDescriptor: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let v = environment["NO_COLOR"], !v.isEmpty { return false }
        return isatty(fileDescriptor) == 1
    }

    /// ANSI colour per level: grey trace/debug, default info, cyan notice, yellow warning, red error, bold red critical.
    public static func ansi(_ level: LogLevel) -> String {
        switch level {
        case .trace, .debug: "\u{1B}[2m"
        case .info: ""
        case .notice: "\u{1B}[36m"
        case .warning: "\u{1B}[33m"
        case .error: "\u{1B}[31m"
        case .critical: "\u{1B}[1;31m"
        }
    }
}
