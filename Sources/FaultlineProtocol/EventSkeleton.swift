// The fields every Sentry event Faultline writes starts from, built once for crash events
// (CrashEvent.make) and for the SDK's captured errors (ScopeContext.eventBase).
import FoundationEssentials

/// Identity, time, level, SDK and the process's scope. Optional strings that are nil or empty are
/// left out; `installID` becomes `user.id`.
public struct EventSkeleton: Sendable {
    public var eventID: String
    /// Seconds since the epoch.
    public var timestamp: Double
    public var level: String
    public var logger: String?
    public var sdkName: String
    public var sdkVersion: String
    public var release: String?
    public var environment: String?
    public var serverName: String?
    public var dist: String?
    public var installID: String?
    public var tags: [String: JSONValue] = [:]
    public var contexts: [String: JSONValue] = [:]

    public init(eventID: String, timestamp: Double, level: String, sdkName: String, sdkVersion: String = FaultlineVersion.string) {
        self.eventID = eventID; self.timestamp = timestamp; self.level = level
        self.sdkName = sdkName; self.sdkVersion = sdkVersion
    }

    /// The event's top-level members, for the caller to add its exception, threads and images to.
    public var fields: [String: JSONValue] {
        var e: [String: JSONValue] = [
            "event_id": .string(eventID), "timestamp": .double(timestamp), "platform": "native", "level": .string(level),
            "sdk": ["name": .string(sdkName), "version": .string(sdkVersion)]
        ]
        if let logger { e["logger"] = .string(logger) }
        for (key, value) in [("release", release), ("environment", environment), ("server_name", serverName), ("dist", dist)] {
            if let value, !value.isEmpty { e[key] = .string(value) }
        }
        if let installID { e["user"] = ["id": .string(installID)] }
        if !tags.isEmpty { e["tags"] = .object(tags) }
        if !contexts.isEmpty { e["contexts"] = .object(contexts) }
        return e
    }
}
