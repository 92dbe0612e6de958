// The logging seam: anything that takes a `LogEvent`. Sinks and decorators implement it; types
// that log take one as a parameter (`init(log: any Logger = NullLogger())`).
import Foundation

/// A destination for log events.
///
/// Contract for implementers:
/// - **Thread safety.** `log(_:)` is called from any thread, concurrently. Implementations are
///   `Sendable` and synchronise internally.
/// - **Blocking.** `log(_:)` runs on the caller's thread and should cost about a microsecond.
///   Do file, socket or terminal I/O on a thread of your own (as `FileLogger` does), or say in
///   your documentation that you block (as `ConsoleLogger` does: one `write(2)` per line). Never
///   wait on the network here, and never log from inside `log(_:)` (a decorator may forward).
/// - **Ordering.** Events from one thread reach the sink in the order they were logged; events
///   from different threads are ordered by when `log(_:)` was entered, not by `timestamp`.
/// - **Errors.** A sink never throws into the caller: it reports its own trouble once (stderr)
///   and keeps accepting events.
/// - **Levels.** `isEnabled(_:)` lets callers skip building a message nobody wants; `log(_:)`
///   may still receive any level and filters again if it cares.
public protocol Logger: Sendable {
    func log(_ event: LogEvent)
    /// Whether an event of this level would be written. Default: always.
    func isEnabled(_ level: LogLevel) -> Bool
}

/// The protocol under a second name, for code that also imports swift-log (whose `Logger` is a
/// struct): `Faultline.Logger` is not reachable because the module and its `Faultline` enum
/// share a name.
public typealias FaultlineLogger = Logger

extension Logger {
    public func isEnabled(_ level: LogLevel) -> Bool { true }

    /// Builds the event (only if the level is enabled) and logs it.
    public func log(
        level: LogLevel, _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        guard isEnabled(level) else { return }
        log(LogEvent(level: level, message: message(), attributes: attributes, file: file, function: function, line: line))
    }
    public func trace(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .trace, message(), attributes: attributes, file: file, function: function, line: line)
    }
    public func debug(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .debug, message(), attributes: attributes, file: file, function: function, line: line)
    }
    public func info(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .info, message(), attributes: attributes, file: file, function: function, line: line)
    }
    public func notice(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .notice, message(), attributes: attributes, file: file, function: function, line: line)
    }
    public func warning(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .warning, message(), attributes: attributes, file: file, function: function, line: line)
    }
    public func error(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .error, message(), attributes: attributes, file: file, function: function, line: line)
    }
    public func critical(
        _ message: @autoclosure () -> String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        log(level: .critical, message(), attributes: attributes, file: file, function: function, line: line)
    }
}
