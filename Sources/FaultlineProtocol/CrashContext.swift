// A crash report's `context`: what the SDK knew of the process before it crashed. The SDK writes
// it once at start (the crash handler copies the bytes into every report), the pickup adds to it
// for crash logs it did not write, and CrashEvent, SwiftBacktraceEvent and the session update read
// it — all through this type, so a key is spelled here only.
import FoundationEssentials

/// Who and where a crashed process was. Optional fields that are nil are left out of the JSON.
public struct CrashContext: Sendable, Equatable {
    public var appID: String?
    public var dist: String?
    public var environment: String?
    /// Becomes the event's `user.id` and the session's `did`.
    public var installID: String?
    public var release: String?
    public var serverName: String?
    public var service: String?
    /// The session the crash ends: a tag on the event, and the session update's `sid`.
    public var sessionID: String?
    /// When that session began, RFC 3339 as the SDK wrote it (Sentry requires it on every update).
    public var sessionStarted: String?
    /// The process-wide trace logs and events carried, so a crash joins them.
    public var trace: Trace?
    /// Sentry contexts as given (`os`, `device`, …); open-ended, so kept as JSON.
    public var contexts: [String: JSONValue] = [:]
    /// Tags as given; open-ended, so kept as JSON.
    public var tags: [String: JSONValue] = [:]

    public struct Trace: Sendable, Equatable {
        public var traceID: String
        public var spanID: String?
        public init(traceID: String, spanID: String?) { self.traceID = traceID; self.spanID = spanID }

        /// Sentry's `trace` context.
        public var json: JSONValue {
            var t: [String: JSONValue] = ["type": "trace", "trace_id": .string(traceID)]
            if let spanID { t["span_id"] = .string(spanID) }
            return .object(t)
        }
    }

    public init() {}

    /// The crashed process's architecture (`contexts.device.arch`), in Sentry's spelling.
    public var architecture: String? { contexts["device"]?["arch"]?.stringValue }

    /// Reads a report's `context` (anything else than an object reads as an empty context).
    public init(json j: JSONValue) {
        appID = j["app_id"]?.stringValue
        dist = j["dist"]?.stringValue
        environment = j["environment"]?.stringValue
        installID = j["install_id"]?.stringValue
        release = j["release"]?.stringValue
        serverName = j["server_name"]?.stringValue
        service = j["service"]?.stringValue
        sessionID = j["session_id"]?.stringValue
        sessionStarted = j["session_started"]?.stringValue
        if let t = j["trace"], let id = t["trace_id"]?.stringValue { trace = Trace(traceID: id, spanID: t["span_id"]?.stringValue) }
        contexts = j["contexts"]?.objectValue ?? [:]
        tags = j["tags"]?.objectValue ?? [:]
    }

    /// The `os` and `device` contexts of this machine, as every Faultline report carries them.
    public static func systemContexts(kernelVersion: String, architecture: String) -> [String: JSONValue] {
        ["device": ["arch": .string(architecture), "type": "device"], "os": osContext(kernelVersion: kernelVersion)]
    }

    /// Sentry's `os` context of a Linux machine (every event the SDK writes carries it).
    public static func osContext(kernelVersion: String) -> JSONValue {
        ["kernel_version": .string(kernelVersion), "name": "Linux", "type": "os", "version": .string(kernelVersion)]
    }

    /// The string fields after `app_id` and `contexts`, in key order.
    private var strings: KeyValuePairs<StaticString, String?> {
        [
            "dist": dist, "environment": environment, "install_id": installID, "release": release,
            "server_name": serverName, "service": service, "session_id": sessionID, "session_started": sessionStarted
        ]
    }

    /// The JSON object, keys sorted (what `JSONValue` serialisation gives), written field by
    /// field: the SDK calls this on the app's thread at start, where building a JSONValue tree of
    /// the whole context first was most of the cost.
    public var jsonBytes: [UInt8] {
        var w = JSONWriter(capacity: 768)
        var first = true
        func field(_ key: StaticString) {
            if !first { w.comma() }
            first = false
            w.key(key)
        }
        w.raw("{")
        if let appID { field("app_id"); w.string(appID) }
        if !contexts.isEmpty { field("contexts"); w.value(.object(contexts)) }
        for (key, value) in strings { if let value { field(key); w.string(value) } }
        if !tags.isEmpty { field("tags"); w.value(.object(tags)) }
        if let trace { field("trace"); w.value(trace.json) }
        w.raw("}")
        return w.bytes
    }

    /// The same object as a JSON value (what a crash event builder takes as its context).
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let appID { o["app_id"] = .string(appID) }
        for (key, value) in strings { if let value { o[key.description] = .string(value) } }
        if !contexts.isEmpty { o["contexts"] = .object(contexts) }
        if !tags.isEmpty { o["tags"] = .object(tags) }
        if let trace { o["trace"] = trace.json }
        return .object(o)
    }
}
