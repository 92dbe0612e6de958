// A response as handlers build it: status, headers, body.
import Foundation
import FaultlineProtocol

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
