// Decorator: passes on events at or above a minimum level.
/// Forwards events whose level is at least `minimum`.
public struct LevelFilterLogger: Logger {
    public let minimum: LogLevel
    public let base: any Logger
    public init(minimum: LogLevel, _ base: any Logger) { self.minimum = minimum; self.base = base }
    public func log(_ event: LogEvent) { if event.level >= minimum { base.log(event) } }
    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimum && base.isEnabled(level) }
}
