// Sentry session update payloads for a crashed run.
import FoundationEssentials
import Glibc
import FaultlineProtocol

/// Sentry session update payloads.
enum SessionUpdate {
    static func crashed(sessionID: String, report: CrashReport) -> JSONValue {
        var attrs: [String: JSONValue] = [:]
        if let r = report.context["release"]?.stringValue { attrs["release"] = .string(r) }
        if let e = report.context["environment"]?.stringValue { attrs["environment"] = .string(e) }
        let ts = SentryTimestamp.rfc3339(report.timestamp)
        var s: [String: JSONValue] = [
            "sid": .string(sessionID), "status": "crashed", "errors": 1, "init": false,
            "timestamp": .string(ts), "attrs": .object(attrs)
        ]
        if let install = report.context["install_id"]?.stringValue { s["did"] = .string(install) }
        s["started"] = report.context["session_started"] ?? .string(ts)
        return .object(s)
    }
}
