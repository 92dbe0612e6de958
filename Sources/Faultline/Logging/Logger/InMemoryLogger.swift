// A test double: keeps every event so a test can assert what a type logged.
import Synchronization

/// Records events in memory, in the order `log(_:)` was entered.
public final class InMemoryLogger: Logger {
    private let store = Mutex<[LogEvent]>([])
    public init() {}
    public func log(_ event: LogEvent) { store.withLock { $0.append(event) } }
    public var events: [LogEvent] { store.withLock { $0 } }
    public var messages: [String] { events.map(\.message) }
    public func clear() { store.withLock { $0.removeAll() } }
}
