// The logger that drops everything: the default argument for types that accept a logger.
/// Drops every event; `isEnabled` is false so callers do not even build the message.
public struct NullLogger: Logger {
    public init() {}
    public func log(_ event: LogEvent) {}
    public func isEnabled(_ level: LogLevel) -> Bool { false }
}
