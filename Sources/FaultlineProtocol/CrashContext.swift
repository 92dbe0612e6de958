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
    /// The session the crash ends, as reports written before the crash core kept it (report field
    /// `session`, CrashSession) named it; read for those reports, no longer written.
    public var sessionID: String?
    /// When that session began, RFC 3339 (Sentry requires it on every update).
    public var sessionStarted: String?
    /// The process-wide trace logs and events carried, so a crash joins them.
    public var trace: Trace?
    /// Sentry contexts as given (`os`, `device`, …); open-ended, so kept as JSON.
    public var contexts: [String: JSONValue] = [:]
    /// This machine's `device` and `os` contexts (`systemContexts`), as the SDK knows them at
    /// start; written into `contexts` (over a context of the same name given there). Typed, not
    /// JSON values, so the SDK writes them on the app's thread without making the process's first
    /// dictionary of JSON values (whose type costs a scan of every loaded library's protocol
    /// conformances). A report read back has them in `contexts` (`init(json:)`).
    public var machine: Machine?
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

        /// `json` written field by field, keys sorted as JSONValue's are.
        func write(into w: inout JSONWriter) {
            w.raw("{")
            if let spanID {
                w.key("span_id")
                w.string(spanID)
                w.comma()
            }
            w.key("trace_id")
            w.string(traceID)
            w.raw(",\"type\":\"trace\"}")
        }
    }

    /// What `systemContexts` says about a machine.
    public struct Machine: Sendable, Equatable {
        public var kernelVersion: String
        public var architecture: String
        public init(kernelVersion: String, architecture: String) {
            self.kernelVersion = kernelVersion
            self.architecture = architecture
        }

        /// `systemContexts`' object written field by field, keys sorted as JSONValue's are.
        func write(into w: inout JSONWriter) {
            w.raw("{\"device\":{\"arch\":")
            w.string(architecture)
            w.raw(",\"type\":\"device\"},\"os\":{\"kernel_version\":")
            w.string(kernelVersion)
            w.raw(",\"name\":\"Linux\",\"type\":\"os\",\"version\":")
            w.string(kernelVersion)
            w.raw("}}")
        }
    }

    public init() {}

    /// The crashed process's architecture (`contexts.device.arch`), in Sentry's spelling.
    public var architecture: String? { machine?.architecture ?? contexts["device"]?["arch"]?.stringValue }

    /// `contexts` with `machine`'s written in: what the JSON carries.
    public var allContexts: [String: JSONValue] {
        guard let machine else { return contexts }
        return contexts.merging(Self.systemContexts(kernelVersion: machine.kernelVersion, architecture: machine.architecture)) { _, system in system }
    }

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
        contexts = j["contexts"]?.objectValue?.dictionary ?? [:]
        tags = j["tags"]?.objectValue?.dictionary ?? [:]
    }

    /// The `os` and `device` contexts of this machine, as every Faultline report carries them.
    public static func systemContexts(kernelVersion: String, architecture: String) -> [String: JSONValue] {
        ["device": ["arch": .string(architecture), "type": "device"], "os": osContext(kernelVersion: kernelVersion)]
    }

    /// Sentry's `os` context of a Linux machine (every event the SDK writes carries it).
    public static func osContext(kernelVersion: String) -> JSONValue {
        ["kernel_version": .string(kernelVersion), "name": "Linux", "type": "os", "version": .string(kernelVersion)]
    }

    /// The string fields after `app_id` and `contexts`, in key order. A call per field rather than
    /// a collection of pairs: the SDK writes them on the app's thread at start, where a generic
    /// collection's first use in the process costs a run-time type lookup.
    private func forEachString(_ body: (StaticString, String?) -> Void) {
        body("dist", dist)
        body("environment", environment)
        body("install_id", installID)
        body("release", release)
        body("server_name", serverName)
        body("service", service)
        body("session_id", sessionID)
        body("session_started", sessionStarted)
    }

    /// The JSON object, keys sorted (what `JSONValue` serialisation gives), written field by
    /// field: the SDK calls this on the app's thread at start, where building JSON values first
    /// was most of the cost (with only `machine` and `trace`, none is made).
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
        if let machine, contexts.isEmpty {
            field("contexts")
            machine.write(into: &w)
        } else if machine != nil || !contexts.isEmpty {
            field("contexts")
            w.value(.object(allContexts))
        }
        forEachString { key, value in if let value { field(key); w.string(value) } }
        if !tags.isEmpty { field("tags"); w.value(.object(tags)) }
        if let trace { field("trace"); trace.write(into: &w) }
        w.raw("}")
        return w.bytes
    }

    /// The same object as a JSON value (what a crash event builder takes as its context).
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let appID { o["app_id"] = .string(appID) }
        forEachString { key, value in if let value { o[key.description] = .string(value) } }
        if machine != nil || !contexts.isEmpty { o["contexts"] = .object(allContexts) }
        if !tags.isEmpty { o["tags"] = .object(tags) }
        if let trace { o["trace"] = trace.json }
        return .object(o)
    }
}
