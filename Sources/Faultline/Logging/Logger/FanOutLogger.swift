// Decorator: one event to several loggers.
/// Forwards each event to every logger that has its level enabled, in the order given.
public struct FanOutLogger: Logger {
    public let loggers: [any Logger]
    public init(_ loggers: [any Logger]) { self.loggers = loggers }
    public func log(_ event: LogEvent) {
        for l in loggers where l.isEnabled(event.level) { l.log(event) }
    }
    public func isEnabled(_ level: LogLevel) -> Bool { loggers.contains { $0.isEnabled(level) } }
}
