// The one-word status /health leads with.
import Foundation

enum ServerHealth {
    /// How long after the last store failure the server still reports itself degraded: long
    /// enough for a load balancer's or monitor's next poll to see an outage that comes and goes.
    static let storeFailureWindowSeconds: Double = 60

    /// "degraded" while requests are answered 503 because the store fails (database down, disk
    /// full), else "ok": a server that refuses every event must not look healthy.
    static func status(refusals: Refusals, now: Double = Date().timeIntervalSince1970) -> String {
        guard let last = refusals.lastRecorded(HTTPResponse.storeFailureLimit), now - last < storeFailureWindowSeconds else { return "ok" }
        return "degraded"
    }
}
