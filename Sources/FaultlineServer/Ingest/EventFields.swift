// Fields ingest reads from an event: timestamps, release, install and app ids.
import Foundation
import FaultlineProtocol

enum EventFields {
    /// The latest timestamp taken as given: the end of year 9999 (RFC 3339's range).
    static let latestTimestamp = SentryTimestamp.latest

    /// Sentry timestamps are seconds since the epoch (number) or RFC 3339 strings. A client's number
    /// may be anything JSON holds (-1e300, 1e308): outside [0, year 9999] it is no timestamp (the
    /// caller uses the time received), so every later conversion to an integer (days ago, links)
    /// stays in range.
    static func timestamp(_ v: JSONValue?) -> Double? {
        guard let t = SentryTimestamp.seconds(v), t.isFinite, t >= 0, t <= latestTimestamp else { return nil }
        return t
    }

    /// How far an event's own timestamp may run ahead of the time it was received, and lag
    /// behind it, before the time received is used instead (Relay's limits: a clock a minute fast,
    /// a report queued for a month). A client clock set years ahead kept its issue first in every
    /// "last seen" list.
    static let maxSecondsInFuture: Double = 60
    static let maxSecondsInPast: Double = 30 * 86_400

    /// The time an event happened, for grouping's first and last seen: its own timestamp when
    /// plausible, else the time received.
    static func eventTimestamp(_ v: JSONValue?, received: Double, sentAt: JSONValue? = nil) -> Double {
        guard var t = timestamp(v) else { return received }
        // A device whose clock is off (the envelope's `sent_at` far from when it arrived) has its
        // times shifted by that drift, as Relay does; a drift under the threshold is transit.
        if let sent = timestamp(sentAt), abs(received - sent) > minimumClockDrift { t += received - sent }
        guard t <= received + maxSecondsInFuture, t >= received - maxSecondsInPast else { return received }
        return t
    }

    /// Relay's: below this, a difference between `sent_at` and arrival is the network, not a clock.
    static let minimumClockDrift = 55.0 * 60

    /// The install id as the client sent it (`InstallID.bounded` before it is stored).
    static func installID(event: JSONValue?, request: HTTPRequest) -> String? {
        if let h = request.header(HeaderName.installID), !h.isEmpty { return h }
        if let t = event?["tags"]?["install_id"]?.stringValue { return t }
        // Relay's rule: a number is an id too (sentry-javascript's `setUser({id: 123})`).
        if let u = event?["user"]?["id"], let id = u.stringValue ?? u.int64Value.map({ String($0) }), !id.isEmpty { return id }
        if let d = event?["contexts"]?["device"]?["device_unique_identifier"]?.stringValue { return d }
        return nil
    }

    /// Without an event: the `did` (distinct id) of a `session` item, which SDKs set to the install.
    static func installID(items: [Envelope.Item]) -> String? {
        for item in items where item.type == "session" {
            if let v = try? JSONValue.parse(item.payload), let d = SessionPayload.installID(in: v), !d.isEmpty { return d }
        }
        return nil
    }

    /// The environment the web pages filter by: the event's `environment`, "production" when it has
    /// none, at most 200 characters.
    static func environment(_ event: JSONValue) -> String {
        String((event["environment"]?.stringValue ?? "production").prefix(200))
    }

    /// The operating system an event names (`contexts.os`: "Linux 6.1.0", or its `name` alone),
    /// at most 100 characters; nil when it names none. The issue page breaks occurrences down by it.
    static func operatingSystem(_ event: JSONValue) -> String? {
        guard let os = event["contexts"]?["os"], let name = os["name"]?.stringValue, !name.isEmpty else { return nil }
        let version = os["version"]?.stringValue ?? ""
        return String((version.isEmpty ? name : name + " " + version).prefix(100))
    }

    /// The tags the issues search matches `key:value` against: the event's `tags` (an object or
    /// Sentry's list of pairs) and `os.name`, the first `maxTags`, keys up to 32 characters and
    /// values up to 200 (longer ones are left out, not cut: a cut value would match what it is not).
    static func tags(_ event: JSONValue) -> [EventTag] {
        var out: [EventTag] = []
        func add(_ key: String, _ value: String?) {
            guard out.count < maxTags, let value, !key.isEmpty, key.utf8.count <= 32, !value.isEmpty, value.utf8.count <= 200 else { return }
            // A secret's value (SensitiveData's rule) is never stored where the tag search and
            // breakdowns show it.
            let tag = EventTag(key: key.lowercased(), value: SensitiveData.isSensitive(key: key) ? "[Filtered]" : value)
            if !out.contains(tag) { out.append(tag) }
        }
        // The event's own fields first, so a thousand client tags cannot push them past the cap.
        if let level = event["level"] { add("level", sentryLevel(level)) }
        add("os.name", event["contexts"]?["os"]?["name"]?.stringValue)
        if let object = event["tags"]?.objectValue {
            for key in object.keys.sorted() { add(key, object[key]?.stringValue) }
        } else if let pairs = event["tags"]?.arrayValue {
            for pair in pairs {
                guard let kv = pair.arrayValue, kv.count == 2, let key = kv[0].stringValue else { continue }
                add(key, kv[1].stringValue)
            }
        }
        return out
    }

    /// Sentry's five levels; what SDKs also send (`warn`, `critical`, `log`, `trace`) mapped as
    /// Relay maps it; anything else, or none, is `error`.
    static func sentryLevel(_ v: JSONValue?) -> String {
        switch v?.stringValue?.lowercased() ?? "" {
        case "fatal", "critical": "fatal"
        case "warning", "warn": "warning"
        case "info", "log": "info"
        case "debug", "trace": "debug"
        default: "error"
        }
    }

    /// At most this many tags of one event are recorded for search.
    static let maxTags = 20

    static func appID(event: JSONValue?, request: HTTPRequest) -> String? {
        if let a = event?["contexts"]?["app"]?["app_identifier"]?.stringValue { return a }
        if let h = request.header(HeaderName.appID), !h.isEmpty { return h }
        return nil
    }
}
