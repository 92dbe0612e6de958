// Sentry's `session` item: written by the SDK (a run's start, clean exit, abnormal end) and by the
// crash pickup (a crashed run), read by the server (the install it names). Keys spelled here only.
import FoundationEssentials

/// One session update. `started` and `timestamp` are RFC 3339 (`SentryTimestamp.rfc3339`).
public struct SessionPayload: Sendable, Equatable {
    public enum Status: String, Sendable { case ok, exited, crashed, abnormal }

    /// `sid`.
    public var sessionID: String
    /// `did`, the distinct id: Faultline sends the install, which the server counts by.
    public var installID: String?
    /// `init`: true on the first update of a session only.
    public var initial: Bool
    public var started: String
    public var timestamp: String
    public var status: Status
    public var errors: Int
    /// Seconds the session lasted (sent when it ended cleanly).
    public var duration: Double?
    public var release: String?
    public var environment: String?

    public init(
        sessionID: String, installID: String?, initial: Bool, started: String, timestamp: String, status: Status, errors: Int,
        release: String?, environment: String?
    ) {
        self.sessionID = sessionID; self.installID = installID; self.initial = initial; self.started = started
        self.timestamp = timestamp; self.status = status; self.errors = errors; self.release = release; self.environment = environment
    }

    /// Reads an update; nil without a `sid` or with a status Sentry does not define.
    public init?(json j: JSONValue) {
        guard let sid = j["sid"]?.stringValue, let status = j["status"]?.stringValue.flatMap(Status.init(rawValue:)) else { return nil }
        sessionID = sid
        installID = j["did"]?.stringValue
        initial = j["init"]?.boolValue ?? false
        started = j["started"]?.stringValue ?? ""
        timestamp = j["timestamp"]?.stringValue ?? ""
        self.status = status
        errors = Int(j["errors"]?.int64Value ?? 0)
        duration = j["duration"]?.doubleValue
        release = j["attrs"]?["release"]?.stringValue
        environment = j["attrs"]?["environment"]?.stringValue
    }

    /// The install a session item names (`did`), without reading the rest.
    public static func installID(in j: JSONValue) -> String? { j["did"]?.stringValue }

    public var json: JSONValue {
        var attrs: [String: JSONValue] = [:]
        if let release { attrs["release"] = .string(release) }
        if let environment { attrs["environment"] = .string(environment) }
        var s: [String: JSONValue] = [
            "sid": .string(sessionID), "init": .bool(initial), "started": .string(started), "timestamp": .string(timestamp),
            "status": .string(status.rawValue), "errors": .int(Int64(errors)), "attrs": .object(attrs)
        ]
        if let installID { s["did"] = .string(installID) }
        if let duration { s["duration"] = .double(duration) }
        return .object(s)
    }
}
