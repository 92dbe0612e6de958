// Decorator: what a logger sees, Faultline sees too — every line a breadcrumb, errors an event.
import Foundation

/// Forwards every event to `base`, records it as a breadcrumb (so a later crash or error event
/// shows it), and turns events at or above `eventLevel` into Faultline error events (with the
/// caller's stack). Use it around an injected logger; `Log.…` lines are breadcrumbs already.
/// Without `Faultline.start`, only the breadcrumb ring and `base` see the events.
public struct CrashReportingLogger: Logger {
    public let base: any Logger
    public let eventLevel: LogLevel
    public init(_ base: any Logger = NullLogger(), eventLevel: LogLevel = .error) {
        self.base = base
        self.eventLevel = eventLevel
    }
    public func log(_ event: LogEvent) {
        BreadcrumbStore.shared.add(event)
        if event.level >= eventLevel {
            var attributes = event.attributes
            attributes["log.level"] = .string(event.level.name)
            attributes["code.function"] = .string(event.function.description)
            Faultline.capture(LoggedError(message: event.message), attributes: attributes, file: event.file, line: event.line)
        }
        if base.isEnabled(event.level) { base.log(event) }
    }
}

/// The error a `CrashReportingLogger` captures for an error-level line: its type names the
/// origin, its description is the message.
public struct LoggedError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}
