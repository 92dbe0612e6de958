// The answer when the store could not be asked or could not keep something (database down, disk
// full): 503 with Retry-After, never a 4xx.
import FaultlineProtocol
import Foundation

extension HTTPResponse {
    /// How long a client is asked to wait before sending again while the store fails.
    static let storeRetrySeconds = 10

    /// SDKs treat 401 and 403 as permanent and drop the event, but keep and resend it after a 503:
    /// a key or token that could not be looked up must be answered with this, not as unknown.
    static func storeUnavailable(_ what: String, _ error: any Error) -> HTTPResponse {
        .detail(503, "\(what): \(error)", headers: [(HeaderName.retryAfter, String(storeRetrySeconds))])
    }
}
