// Console sink: one line per event on stderr, coloured by level on a terminal.
import FaultlineProtocol
import Foundation
import FaultlineFiles

/// Writes `HH:MM:SS.mmm LEVEL message {attributes} (file:line)` to stderr with one write(2) per
/// line (this sink blocks on a slow terminal, like print does). Colour when stderr is a terminal
/// and `NO_COLOR` is unset or empty (https://no-color.org), plain otherwise.
public struct ConsoleLogger: Logger {
    public let minimumLevel: LogLevel
    public let colour: Bool
    private let fd: Int32

    public init(minimumLevel: LogLevel = .info, colour: Bool? = nil, fileDescriptor: Int32 = 2) {
        self.minimumLevel = minimumLevel
        self.fd = fileDescriptor
        self.colour = colour ?? ConsoleLogger.wantsColour(fileDescriptor: fileDescriptor)
    }

    /// The NO_COLOR + isatty rule, shared with `faultline console` (FaultlineProtocol's LogColour).
    public static func wantsColour(fileDescriptor: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        LogColour.wanted(fileDescriptor: fileDescriptor, environment: environment)
    }

    /// ANSI colour per level (LogColour.ansi).
    public static func ansi(_ level: LogLevel) -> String { LogColour.ansi(level) }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimumLevel }

    public func log(_ event: LogEvent) {
        guard event.level >= minimumLevel else { return }
        var t = time_t(event.timestamp.seconds)
        var tm = tm()
        localtime_r(&t, &tm)
        var line = String(format: "%02d:%02d:%02d.%03d ", tm.tm_hour, tm.tm_min, tm.tm_sec, Int(event.timestamp.nanoseconds) / 1_000_000)
        let level = event.level.name.uppercased().padding(toLength: 8, withPad: " ", startingAt: 0)
        line += colour ? Self.ansi(event.level) + level + "\u{1B}[0m" : level
        line += event.message
        if !event.attributes.isEmpty {
            line += " " + event.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.consoleText)" }.joined(separator: " ")
        }
        line += colour ? " \u{1B}[2m(\(event.file):\(event.line))\u{1B}[0m\n" : " (\(event.file):\(event.line))\n"
        Array(line.utf8).withUnsafeBytes { _ = writeAll(fd, $0) }
    }
}

extension AttributeValue {
    var consoleText: String {
        switch self {
        case .string(let s): s.contains(" ") ? "\"\(s)\"" : s
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .bool(let b): String(b)
        }
    }
}
