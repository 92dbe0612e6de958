// The DSN: where a client sends events and with which public key.
import FoundationEssentials

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
        case badPort(String)

        public var description: String {
            switch self {
            case .empty: return "the DSN is empty"
            case .notAURL(let s): return "the DSN is not a URL: \(s)"
            case .unsupportedScheme(let s): return "the DSN scheme must be http or https, not \(s)"
            case .missingPublicKey: return "the DSN has no public key (expected scheme://KEY@host/PROJECT)"
            case .missingProjectID: return "the DSN has no project id at the end of its path"
            case .badPort(let p): return "the DSN's port \(p) is not a TCP port (1-65535)"
            case .serverTokenInDSN:
                return "the DSN carries a server token (\(ServerToken.prefix)…); server tokens must never ship inside an app — use the project's public key"
            }
        }
    }

    public init(parsing string: String) throws(ParseError) {
        let s = DSN.trimmed(string)
        guard !s.isEmpty else { throw .empty }
        let url: URLParts
        if let plain = DSN.plainParts(s) {
            url = plain
        } else {
            guard let c = URLComponents(string: s), let scheme = c.scheme, let host = c.host, !host.isEmpty else {
                throw .notAURL(s)
            }
            // URLComponents gives no port for digits too many for an Int: refused, not defaulted.
            if c.port == nil, let digits = DSN.authorityPortDigits(s) { throw .badPort(digits) }
            url = URLParts(scheme: scheme, user: c.user, host: host, port: c.port, path: c.path)
        }
        let scheme = url.scheme, host = url.host
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        if let port = url.port, !(1...65535).contains(port) { throw .badPort(String(port)) }
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

    /// The digits after the last `:` of the authority (after `user@`, outside an IPv6 `[…]`), if any.
    static func authorityPortDigits(_ s: String) -> String? {
        guard let start = s.firstRange(of: "://")?.upperBound else { return nil }
        var authority = s[start...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { authority = authority[..<end] }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let bracket = authority.lastIndex(of: "]") { authority = authority[authority.index(after: bracket)...] }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        let digits = authority[authority.index(after: colon)...]
        return !digits.isEmpty && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? String(digits) : nil
    }

    struct URLParts: Equatable {
        var scheme: String
        var user: String?
        var host: String
        var port: Int?
        var path: String
    }

    /// The parts of a plain DSN — `scheme://user[:password]@host[:port][/path]` in lowercase
    /// scheme letters and unreserved ASCII, the shape every DSN a server prints has — split by
    /// hand; nil for anything else (percent-escapes, IPv6 brackets, queries, a missing host),
    /// which URLComponents then parses. Its first use in a process costs a few hundred
    /// microseconds, and the SDK parses its DSN on the app's thread at start.
    /// DSNTests checks that both agree on plain DSNs.
    static func plainParts(_ s: String) -> URLParts? {
        let b = Array(s.utf8)
        func unreserved(_ c: UInt8) -> Bool {
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
        }
        var i = 0
        while i < b.count, b[i] >= 0x61, b[i] <= 0x7A { i += 1 }
        guard i > 0, b.count > i + 3, b[i] == 0x3A, b[i + 1] == 0x2F, b[i + 2] == 0x2F else { return nil }
        let scheme = String(decoding: b[..<i], as: UTF8.self)
        let authorityStart = i + 3
        var end = authorityStart
        while end < b.count, b[end] != 0x2F { end += 1 }
        let authority = b[authorityStart..<end]
        guard let at = authority.firstIndex(of: 0x40), authority.lastIndex(of: 0x40) == at else { return nil }
        let userinfo = authority[authorityStart..<at], hostport = authority[(at + 1)...]
        guard userinfo.allSatisfy({ unreserved($0) || $0 == 0x3A }), hostport.allSatisfy({ unreserved($0) || $0 == 0x3A }) else { return nil }
        let user = userinfo.firstIndex(of: 0x3A).map { userinfo[..<$0] } ?? userinfo
        var host = hostport[...], port: Int?
        if let colon = hostport.firstIndex(of: 0x3A) {
            let digits = hostport[(colon + 1)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            host = hostport[..<colon]
            port = Int(String(decoding: digits, as: UTF8.self))
        }
        guard !host.isEmpty, host.allSatisfy(unreserved) else { return nil }
        let path = b[end...]
        guard path.allSatisfy({ unreserved($0) || $0 == 0x2F }) else { return nil }
        return URLParts(
            scheme: scheme, user: String(decoding: user, as: UTF8.self), host: String(decoding: host, as: UTF8.self),
            port: port, path: String(decoding: path, as: UTF8.self))
    }

    /// Nothing but spaces and tabs (and Unicode spaces): no DSN given, rather than a malformed one.
    public static func isBlank(_ s: String) -> Bool {
        guard s.utf8.allSatisfy({ $0 < 0x80 }) else { return s.trimmingBlanks().isEmpty }
        return s.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// Surrounding whitespace and newlines removed; ASCII by hand, anything else by scalar.
    static func trimmed(_ s: String) -> String {
        let b = s.utf8
        guard b.allSatisfy({ $0 < 0x80 }) else { return s.trimmingWhitespaceAndNewlines() }
        func space(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }
        guard let first = b.firstIndex(where: { !space($0) }), let last = b.lastIndex(where: { !space($0) }) else { return "" }
        return String(decoding: b[first...last], as: UTF8.self)
    }

    public var hostAndPort: String { port.map { "\(host):\($0)" } ?? host }
    public var description: String { Self.text(scheme: scheme, publicKey: publicKey, authority: hostAndPort, pathPrefix: pathPrefix, projectID: projectID) }

    /// The DSN a client embeds to reach the server at `serverURL` (`http[s]://host[:port][/prefix]`:
    /// the server's public URL, or the address it listens on) with `publicKey` for `projectID`.
    /// A prefix is kept (a server behind a proxy path); a trailing `/` is not.
    public static func text(serverURL: String, publicKey: PublicKey, projectID: String) -> String {
        guard let separator = serverURL.firstRange(of: "://") else { return "\(publicKey.value)@\(serverURL)/\(projectID)" }
        var rest = serverURL[separator.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var path = rest[slash...]
        while path.hasSuffix("/") { path.removeLast() }
        return text(
            scheme: String(serverURL[..<separator.lowerBound]), publicKey: publicKey, authority: String(authority), pathPrefix: String(path),
            projectID: projectID)
    }

    /// Every DSN Faultline writes is written here: `{scheme}://{key}@{authority}{prefix}/{project}`.
    static func text(scheme: String, publicKey: PublicKey, authority: String, pathPrefix: String, projectID: String) -> String {
        "\(scheme)://\(publicKey.value)@\(authority)\(pathPrefix)/\(projectID)"
    }
    public var envelopeURL: URL { URL(string: "\(scheme)://\(hostAndPort)\(pathPrefix)/api/\(projectID)/envelope/")! }

    /// The `X-Sentry-Auth` header value.
    public func authHeader(client: String) -> String {
        "Sentry sentry_version=7, sentry_client=\(client), sentry_key=\(publicKey.value)"
    }
}
