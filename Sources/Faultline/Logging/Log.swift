// Logs and breadcrumbs: every log line becomes a breadcrumb in the crash handler's ring.
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
}

public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error
    public static func < (l: LogLevel, r: LogLevel) -> Bool { l.rawValue < r.rawValue }
    var sentryName: String { ["debug", "info", "warning", "error"][rawValue] }
}

/// The SDK's logging front. Each call records a breadcrumb (pre-serialised into the crash
/// handler's ring, so a crash report carries the last 32) and keeps it for the next event.
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

    /// Test hook: nothing is buffered today (breadcrumbs reach the ring synchronously), so this
    /// only exists to keep call sites honest if that changes.
    public static func flushForTesting() {}

    static func record(_ level: LogLevel, _ message: String, _ attributes: [String: AttributeValue],
                       _ file: StaticString, _ function: StaticString, _ line: UInt) {
        var data: [String: JSONValue] = [:]
        for (k, v) in attributes { data[k] = v.json }
        data["code.filepath"] = .string(file.description)
        data["code.function"] = .string(function.description)
        data["code.lineno"] = .int(Int64(line))
        let crumb = Breadcrumb(timestamp: Date().timeIntervalSince1970, level: level, category: "log",
                               message: message, data: data)
        BreadcrumbStore.shared.add(crumb)
    }
}

/// One breadcrumb, in Sentry's shape.
struct Breadcrumb: Sendable {
    var timestamp: Double
    var level: LogLevel
    var category: String
    var message: String
    var data: [String: JSONValue]

    var json: JSONValue {
        ["timestamp": .double(timestamp), "type": "default", "category": .string(category),
         "level": .string(level.sentryName), "message": .string(message), "data": .object(data)]
    }
}
