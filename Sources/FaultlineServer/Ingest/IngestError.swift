// Why ingest refused a request; each case maps to one HTTP status and a `detail` message.
import Foundation
import FaultlineProtocol

public enum IngestError: Error, Equatable, CustomStringConvertible {
    case malformed(String)  // 400
    case unauthorized(String)  // 401
    case forbidden(String)  // 403
    case tooLarge(String)  // 413
    case unsupportedEncoding(String)  // 415
    case rateLimited(retryAfter: Int, categories: [String])  // 429
    /// Too much of one costly kind of work in flight (minidump walks): 429 for one address's
    /// share, 503 for the server's; retry after a second.
    case busy(String, serverWide: Bool)  // 429 or 503

    public var status: Int {
        switch self {
        case .malformed: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .tooLarge: return 413
        case .unsupportedEncoding: return 415
        case .rateLimited: return 429
        case .busy(_, let serverWide): return serverWide ? 503 : 429
        }
    }

    public var description: String {
        switch self {
        case .malformed(let s), .unauthorized(let s), .forbidden(let s), .tooLarge(let s), .unsupportedEncoding(let s), .busy(let s, _):
            return s
        case .rateLimited(let s, let categories): return "this sender sent too many (\(categories.joined(separator: ", "))); retry after \(s) s"
        }
    }

    public var response: HTTPResponse {
        if case .rateLimited(let s, let categories) = self {
            return .detail(
                429, description,
                headers: [
                    (HeaderName.retryAfter, String(s)),
                    (HeaderName.sentryRateLimits, RateLimitHeader.value([.init(seconds: Double(s), categories: categories, scope: "key")]))
                ])
        }
        if case .busy = self { return .detail(status, description, headers: [(HeaderName.retryAfter, "1")]) }
        return .detail(status, description)
    }
}
