// The DSN: where a client sends events and with which public key.
import Foundation

/// `{scheme}://{public_key}@{host}[:{port}]{path}/{project_id}`.
public struct DSN: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    public let publicKey: PublicKey
    public let host: String
    public let port: Int?
    public let pathPrefix: String
    public let projectID: String

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case empty
        case notAURL(String)
        case unsupportedScheme(String)
        case missingPublicKey
        case missingProjectID
        case serverTokenInDSN

        public var description: String {
            switch self {
            case .empty: return "the DSN is empty"
            case .notAURL(let s): return "the DSN is not a URL: \(s)"
            case .unsupportedScheme(let s): return "the DSN scheme must be http or https, not \(s)"
            case .missingPublicKey: return "the DSN has no public key (expected scheme://KEY@host/PROJECT)"
            case .missingProjectID: return "the DSN has no project id at the end of its path"
            case .serverTokenInDSN:
                return "the DSN carries a server token (\(ServerToken.prefix)…); server tokens must never ship inside an app — use the project's public key"
            }
        }
    }

    public init(parsing string: String) throws(ParseError) {
        let s = string.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !s.isEmpty else { throw .empty }
        guard let url = URLComponents(string: s), let scheme = url.scheme, let host = url.host, !host.isEmpty else {
            throw .notAURL(s)
        }
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        guard let user = url.user, !user.isEmpty else { throw .missingPublicKey }
        if ServerToken.looksLikeServerToken(user) { throw .serverTokenInDSN }
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        guard let slash = path.lastIndex(of: "/") else { throw .missingProjectID }
        let project = String(path[path.index(after: slash)...])
        guard !project.isEmpty else { throw .missingProjectID }
        self.scheme = scheme
        self.publicKey = PublicKey(user)
        self.host = host
        self.port = url.port
        self.pathPrefix = String(path[..<slash])
        self.projectID = project
    }

    public var hostAndPort: String { port.map { "\(host):\($0)" } ?? host }
    public var description: String { "\(scheme)://\(publicKey.value)@\(hostAndPort)\(pathPrefix)/\(projectID)" }
    public var envelopeURL: URL { URL(string: "\(scheme)://\(hostAndPort)\(pathPrefix)/api/\(projectID)/envelope/")! }

    /// The `X-Sentry-Auth` header value.
    public func authHeader(client: String) -> String {
        "Sentry sentry_version=7, sentry_client=\(client), sentry_key=\(publicKey.value)"
    }
}
