// Logs and breadcrumbs: every log line becomes a breadcrumb in the crash handler's ring, and
// lines at or above the configured level are also sent as Sentry log items.
import Foundation
import FaultlineProtocol
import Synchronization

/// A typed attribute value attached to a log line or an event.
public enum AttributeValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
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
        switch self {
        case .string: "string";
        case .int: "integer";
        case .double: "double";
        case .bool: "boolean"
        }
    }
}

extension JSONWriter {
    /// An attribute value in the writer's one number format.
    mutating func attribute(_ v: AttributeValue) {
        switch v {
        case .string(let s): string(s)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .bool(let b): bool(b)
        }
    }
}

/// One log line as recorded on the calling thread; serialised for sending on the SDK's thread.
typealias LogRecord = LogEvent

/// The SDK's global logging front. Every line becomes a breadcrumb (the crash handler's ring),
/// lines at or above `Options.sendLogsAtOrAbove` are sent as log items, and every line is also
/// handed to the logger installed with `Log.bootstrap` (file, console, journal sinks…).
/// Cost on the calling thread: one breadcrumb written straight into the crash ring's slot as a
/// binary record (no allocation, no escaping: `BreadcrumbRecord`), an append to
/// the send buffer for sent lines, and whatever the installed logger does (the file log copies
/// one formatted line into a ring; the writing happens on its own thread).
/// Attributes are taken as written at the call site (`attributes: ["a": 1, "b": "x"]`, a
/// `KeyValuePairs`: no hashing, no dictionary); a dictionary built elsewhere goes through
/// `Log.logger.info(…, attributes: dictionary)`.
public enum Log {
    @inlinable
    public static func trace(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.trace, message(), attributes, file, function, line)
    }
    @inlinable
    public static func debug(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.debug, message(), attributes, file, function, line)
    }
    @inlinable
    public static func info(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.info, message(), attributes, file, function, line)
    }
    @inlinable
    public static func notice(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.notice, message(), attributes, file, function, line)
    }
    @inlinable
    public static func warning(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.warning, message(), attributes, file, function, line)
    }
    @inlinable
    public static func error(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.error, message(), attributes, file, function, line)
    }
    @inlinable
    public static func critical(
        _ message: @autoclosure () -> String, attributes: KeyValuePairs<String, AttributeValue> = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        record(.critical, message(), attributes, file, function, line)
    }

    /// Installs the logger every `Log.…` line is also written to (replacing the previous one), e.g.
    /// `Log.bootstrap(FanOutLogger([try FileLogger(path: …), ConsoleLogger()]))`. Pass
    /// `NullLogger()` to stop. Breadcrumbs and sent log items do not depend on it.
    public static func bootstrap(_ logger: any Logger) {
        installed.withLock {
            $0 = logger is NullLogger ? nil : logger
            hasInstalled.store($0 != nil, ordering: .relaxed)
        }
    }

    /// The facade as an injectable `Logger`: a type that takes `log: any Logger` can be given
    /// `Log.logger` in production and an `InMemoryLogger` in its tests.
    public static var logger: any Logger { FacadeLogger() }

    private static let installed = Mutex<(any Logger)?>(nil)
    private static let hasInstalled = Atomic<Bool>(false)  // most lines skip the lock: no logger installed

    /// A `Log.…` line: the breadcrumb is written from the caller's attributes as they are; a
    /// `LogEvent` (and its dictionary) is built only when the line is also sent or an installed
    /// logger wants it.
    @usableFromInline
    static func record(
        _ level: LogLevel, _ message: String, _ attributes: KeyValuePairs<String, AttributeValue>,
        _ file: StaticString, _ function: StaticString, _ line: UInt
    ) {
        let timestamp = LogTimestamp.now()
        var traceID: String?, spanID: String?
        if let c = Trace.current {
            traceID = c.traceID.hex
            spanID = c.spanID.hex
            Trace.refreshThreadSlot(c)
        }
        BreadcrumbStore.add(
            .init(
                level: level, message: message, file: file, function: function, line: line,
                timestamp: timestamp, traceID: traceID, spanID: spanID), attributes: attributes)
        let sent = LogBuffer.shared.sendLevel.map { level >= $0 } ?? false
        let sink = hasInstalled.load(ordering: .relaxed) ? installed.withLock({ $0 }).flatMap { $0.isEnabled(level) ? $0 : nil } : nil
        guard sent || sink != nil else { return }
        var dictionary = [String: AttributeValue](minimumCapacity: attributes.count)
        for (k, v) in attributes { dictionary[k] = v }  // a key given twice: the last value, as in the breadcrumb
        let event = LogEvent(
            level: level, message: message, attributes: dictionary, file: file, function: function, line: line,
            timestamp: timestamp, traceID: traceID, spanID: spanID)
        if sent { LogBuffer.shared.append(event) }
        sink?.log(event)
    }

    static func record(_ event: LogEvent) {
        var event = event
        // The current span names the line (and refreshes this thread's crash-report slot: a task
        // may have hopped here since the span began).
        if let c = Trace.current {
            if event.traceID == nil {
                event.traceID = c.traceID.hex
                event.spanID = c.spanID.hex
            }
            Trace.refreshThreadSlot(c)
        }
        BreadcrumbStore.shared.add(event)
        if let threshold = LogBuffer.shared.sendLevel, event.level >= threshold { LogBuffer.shared.append(event) }
        if hasInstalled.load(ordering: .relaxed), let sink = installed.withLock({ $0 }), sink.isEnabled(event.level) { sink.log(event) }
    }
}

/// `Log.logger`: forwards to the global facade (breadcrumbs, sending, installed sinks).
struct FacadeLogger: Logger {
    func log(_ event: LogEvent) { Log.record(event) }
}
