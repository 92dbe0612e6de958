// Requests and responses as plain values, independent of libmicrohttpd.
import Foundation
import FaultlineProtocol

/// One HTTP request after its body has been received (bounded by the handler's limit).
public struct HTTPRequest: Sendable {
    public let method: String
    /// The decoded path without the query string, as libmicrohttpd hands it over.
    public let path: String
    public let query: [String: String]
    /// Header names are lowercased.
    public let headers: [String: String]
    public var body: Data

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Path split on "/" without empty components.
    public var pathComponents: [String] { path.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }

    /// The token from `Authorization: Bearer <token>`, if any.
    public var bearerToken: String? {
        guard let auth = header("authorization") else { return nil }
        let parts = auth.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }
}

public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case data(Data)
        /// Streamed from disk by libmicrohttpd; the path is always one the server built itself.
        case file(path: String, size: Int64)
    }
    public var status: Int
    public var headers: [(String, String)]
    public var body: Body

    public init(status: Int, headers: [(String, String)] = [], body: Body = .data(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: .data(value.serialized()))
    }

    /// Sentry-style error: `{"detail": "…"}`.
    public static func detail(_ status: Int, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        json(["detail": .string(message)], status: status, headers: headers)
    }

    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: .data(Data(text.utf8)))
    }
}

/// What the HTTP layer calls. Implementations must be thread-safe: the pool calls them concurrently.
public protocol HTTPHandling: Sendable {
    /// Largest body accepted for this request line; larger bodies get 413 without being buffered.
    func bodyLimit(method: String, path: String) -> Int
    /// Called with the request line and headers, before any body is read: a response here (an
    /// authentication failure) is sent at once and the body is never buffered.
    func preflight(_ head: HTTPRequest) -> HTTPResponse?
    func handle(_ request: HTTPRequest) -> HTTPResponse
}

extension HTTPHandling {
    public func preflight(_ head: HTTPRequest) -> HTTPResponse? { nil }
}
