// What the SDK keeps of a server's answer: its status, the few headers it reads, and at most
// 64 KiB of body. Anything longer is never read (the connection is closed), never decompressed.
import Foundation
import FaultlineProtocol

/// One request the SDK sends (an envelope, a log archive, an upload-switch check).
struct HTTPRequest: Sendable {
    var method: String
    var url: URL
    /// Sent as given, in this order. Never sent anywhere but `url`'s origin: redirects are not followed.
    var headers: [(name: String, value: String)]
    var body: Data?
    /// Seconds for the whole exchange, connecting included.
    var timeout: Double
}

/// A server's answer as far as the SDK read it. The status line and every header arrived; the
/// body may have been cut off (`bodyComplete == false`): it is only ever an error text or a small
/// JSON object, so the answer still counts as the status it carried.
struct HTTPAnswer: Sendable, Equatable {
    /// The most body the SDK keeps; beyond it the transfer is stopped and the connection closed.
    static let bodyCap = 64 * 1024
    /// The longest header value kept (a longer one is cut: no header the SDK reads is that long).
    static let headerValueCap = 1024
    /// The headers the SDK reads; any other is skipped as it arrives.
    static let keptHeaders: Set<String> = [
        HeaderName.retryAfter.lowercased(), HeaderName.sentryRateLimits.lowercased(), "location",
        HeaderName.logUpload.lowercased(), "content-encoding"
    ]

    var status: Int
    /// Lowercased names; only `keptHeaders`.
    var headers: [String: String]
    /// At most `bodyCap` bytes, exactly as sent (a `Content-Encoding: gzip` body stays compressed).
    var body: Data
    /// False when the body went on past `bodyCap`, or the exchange ended (timeout, cancel, reset)
    /// before the body did: `body` is then only its beginning.
    var bodyComplete: Bool

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body when it arrived whole and unencoded (what a JSON field may be read from).
    var completePlainBody: Data? {
        guard bodyComplete, header("content-encoding").map({ $0.isEmpty || $0 == "identity" }) ?? true else { return nil }
        return body
    }
}

/// Why a request got no answer (no status line and headers arrived).
struct HTTPFailure: Error, Equatable, CustomStringConvertible {
    var description: String
}
