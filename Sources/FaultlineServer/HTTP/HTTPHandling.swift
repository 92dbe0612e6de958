// What the HTTP server calls for every request.
import Foundation
import FaultlineProtocol

/// What the HTTP layer calls. Implementations must be thread-safe: the pool calls them concurrently.
public protocol HTTPHandling: Sendable {
    /// Largest body accepted for this request line; larger bodies get 413 without being buffered.
    func bodyLimit(method: String, path: String) -> Int
    /// Called with the request line and headers, before any body is read: a response here (an
    /// authentication failure) is sent at once and the body is never buffered.
    func preflight(_ head: HTTPRequest) -> HTTPResponse?
    func handle(_ request: HTTPRequest) -> HTTPResponse
    /// Headers added to every answer to this request line, refusals at any stage included (the
    /// ingest routes' CORS headers).
    func responseHeaders(method: String, path: String) -> [(String, String)]
}

extension HTTPHandling {
    public func preflight(_ head: HTTPRequest) -> HTTPResponse? { nil }
    public func responseHeaders(method: String, path: String) -> [(String, String)] { [] }
}
