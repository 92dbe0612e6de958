// One HTTP request as a plain value, independent of libmicrohttpd.
import Foundation
import FaultlineProtocol

/// One HTTP request after its body has been received (bounded by the handler's limit).
public struct HTTPRequest: Sendable {
    public let method: String
    /// The decoded path without the query string, as libmicrohttpd hands it over.
    public let path: String
    public let query: [String: String]
    /// Every value of each query argument, in order (`?id=1&id=2`; `query` keeps the last). At
    /// most 10,000 values are kept.
    public let queryValues: [String: [String]]
    /// Header names are lowercased.
    public let headers: [String: String]
    public var body: Data
    /// Who sent the request: the peer's address, or, when the peer is a trusted proxy, the
    /// client it names (`TrustedProxies.clientAddress`). Per-address limits key on this.
    public var clientAddress: String

    public init(
        method: String, path: String, query: [String: String] = [:], queryValues: [String: [String]]? = nil,
        headers: [String: String] = [:], body: Data = Data(), clientAddress: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.queryValues = queryValues ?? query.mapValues { [$0] }
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
        self.clientAddress = clientAddress
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
