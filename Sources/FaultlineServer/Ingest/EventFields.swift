// Fields ingest reads from an event: timestamps, release, install and app ids.
import Foundation
import FaultlineProtocol

enum EventFields {
    /// Sentry timestamps are seconds since the epoch (number) or RFC 3339 strings.
    static func timestamp(_ v: JSONValue?) -> Double? { SentryTimestamp.seconds(v) }

    static func installID(event: JSONValue?, request: HTTPRequest) -> String? {
        if let h = request.header("x-faultline-install-id"), !h.isEmpty { return h }
        if let t = event?["tags"]?["install_id"]?.stringValue { return t }
        if let u = event?["user"]?["id"]?.stringValue { return u }
        if let d = event?["contexts"]?["device"]?["device_unique_identifier"]?.stringValue { return d }
        return nil
    }

    /// Without an event: the `did` (distinct id) of a `session` item, which SDKs set to the install.
    static func installID(items: [Envelope.Item]) -> String? {
        for item in items where item.type == "session" {
            if let v = try? JSONValue.parse(item.payload), let d = v["did"]?.stringValue, !d.isEmpty { return d }
        }
        return nil
    }

    static func appID(event: JSONValue?, request: HTTPRequest) -> String? {
        if let a = event?["contexts"]?["app"]?["app_identifier"]?.stringValue { return a }
        if let h = request.header("x-faultline-app-id"), !h.isEmpty { return h }
        return nil
    }
}
