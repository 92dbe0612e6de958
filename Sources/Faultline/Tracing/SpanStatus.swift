// How a span ended (Sentry's span status values).
import CFaultlineCrash
import Foundation
import Synchronization

/// How a span ended, in Sentry's span status vocabulary (which maps onto HTTP codes).
public enum SpanStatus: String, Sendable {
    case ok, cancelled, unknownError = "unknown_error", invalidArgument = "invalid_argument"
    case deadlineExceeded = "deadline_exceeded", notFound = "not_found", alreadyExists = "already_exists"
    case permissionDenied = "permission_denied", resourceExhausted = "resource_exhausted"
    case failedPrecondition = "failed_precondition", aborted, outOfRange = "out_of_range"
    case unimplemented, internalError = "internal_error", unavailable, dataLoss = "data_loss"
    case unauthenticated

    /// sentry-python's mapping of an HTTP response code.
    public init(httpStatus code: Int) {
        switch code {
        case ..<400: self = .ok
        case 401: self = .unauthenticated
        case 403: self = .permissionDenied
        case 404: self = .notFound
        case 409: self = .alreadyExists
        case 413: self = .failedPrecondition
        case 429: self = .resourceExhausted
        case 400..<500: self = .invalidArgument
        case 501: self = .unimplemented
        case 503: self = .unavailable
        case 504: self = .deadlineExceeded
        default: self = .internalError
        }
    }
}
