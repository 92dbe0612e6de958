// Logs and breadcrumbs: every log line becomes a breadcrumb in the crash handler's ring, and
// lines at or above the configured level are also sent as Sentry log items.
import Foundation
import FaultlineProtocol

/// A typed attribute value attached to a log line or an event.
public enum AttributeValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
                            ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    public init(stringLiteral v: String) { self = .string(v) }
    public init(integerLiteral v: Int) { self = .int(v) }
    public init(floatLiteral v: Double) { self = .double(v) }
    public init(booleanLiteral v: Bool) { self = .bool(v) }

    var json: JSONValue {
        switch self {
        case .string(let s): return .string(s)
        case .int(let i): return .int(Int64(i))
        case .double(let d): return .double(d)
        case .bool(let b): return .bool(b)
        }
    }
    /// Sentry log attribute type names.
    var sentryType: String {
        switch self { case .string: "string"; case .int: "integer"; case .double: "double"; case .bool: "boolean" }
    }
}

public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error
    public static func < (l: LogLevel, r: LogLevel) -> Bool { l.rawValue < r.rawValue }
    var sentryName: StaticString {
        switch self { case .debug: "debug"; case .info: "info"; case .warning: "warning"; case .error: "error" }
    }
    var name: String { sentryName.description }
}

/// One log line as recorded on the calling thread; serialised for sending on the SDK's thread.
struct LogRecord: Sendable {
    var timestamp: Double
    var level: LogLevel
    var message: String
    var attributes: [String: AttributeValue]
    var file: StaticString
    var function: StaticString
    var line: UInt
}

/// The SDK's logging front. Cost on the calling thread: one breadcrumb serialised into the crash
/// handler's ring (memory only) and, for lines that are sent, one append to an in-memory buffer.
/// No I/O and no waiting on the network happen here.
public enum Log {
    public static func debug(_ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
                             file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        record(.debug, message(), attributes, file, function, line)
    }
    public static func info(_ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
                            file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        record(.info, message(), attributes, file, function, line)
    }
    public static func warning(_ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
                               file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        record(.warning, message(), attributes, file, function, line)
    }
    public static func error(_ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
                             file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        record(.error, message(), attributes, file, function, line)
    }

    /// Kept for call sites written when logs were buffered; breadcrumbs reach the ring synchronously.
    public static func flushForTesting() {}

    static func record(_ level: LogLevel, _ message: String, _ attributes: [String: AttributeValue],
                       _ file: StaticString, _ function: StaticString, _ line: UInt) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let r = LogRecord(timestamp: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9, level: level, message: message,
                          attributes: attributes, file: file, function: function, line: line)
        BreadcrumbStore.shared.add(r)
        if let threshold = LogBuffer.shared.sendLevel, level >= threshold { LogBuffer.shared.append(r) }
    }
}
