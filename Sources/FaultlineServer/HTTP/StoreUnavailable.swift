// The answer when the store could not be asked or could not keep something (database down, disk
// full): 503 with Retry-After, never a 4xx.
import FaultlineProtocol
import Foundation

extension HTTPResponse {
    /// How long a client is asked to wait before sending again while the store fails.
    static let storeRetrySeconds = 10

    /// The refusal name store failures are counted under (`refused` in /health).
    static let storeFailureLimit = "store.unavailable"

    /// SDKs treat 401 and 403 as permanent and drop the event, but keep and resend it after a 503:
    /// a key or token that could not be looked up must be answered with this, not as unknown.
    /// Counted in `refusals`, so /health shows the server degraded while the store fails.
    static func storeUnavailable(_ what: String, _ error: any Error, counting refusals: Refusals?) -> HTTPResponse {
        let message = "\(what): \(error)"
        refusals?.record(storeFailureLimit, detail: message)
        return .detail(503, message, headers: [(HeaderName.retryAfter, String(storeRetrySeconds))])
    }
}
