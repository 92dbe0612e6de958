// One row of the server's route table (Router.routes): method, path pattern, required credential,
// what body the route takes, and its handler. Preflight (before the body), the body limit and
// dispatch all read the same row.
import Foundation

/// Who may call a route. Checked from the request line and headers, before any body byte is read.
enum Credential: Sendable {
    /// No credential (health, debuginfod, the redirect to the pages).
    case anyone
    /// A project's public key (Sentry ingest); IngestHandler reads which project it belongs to.
    case publicKey
    /// A Bearer server token (uploads, the JSON read API).
    case serverToken
    /// A web session cookie and, on POST, its CSRF token: checked by WebUI for each page.
    case webSession
}

/// The body a route accepts on POST/PUT; anything else sent a body is refused before reading it.
enum BodyRule: Sendable {
    case none
    /// POST only, up to `IngestLimits.maxRequestBytes`.
    case ingest
    /// POST or PUT, up to the given bytes.
    case upload(maxBytes: Int)
    /// POST only, to a path below /ui/, up to `WebUI.maxFormBytes`.
    case webForm
}

/// A path pattern: `/api/0/projects/*/*/issues`. `*` is one component, `a|b` one of the names,
/// and a trailing `**` any number of components (none included). Matching yields the components
/// that `*`, `a|b` and `**` stood for, in order.
struct RoutePattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable { case literal(String), oneOf(Set<String>), any, rest }
    let segments: [Segment]
    let description: String

    init(_ pattern: String) {
        description = pattern
        segments = pattern.split(separator: "/").map { s in
            switch s {
            case "*": .any
            case "**": .rest
            default: s.contains("|") ? .oneOf(Set(s.split(separator: "|").map(String.init))) : .literal(String(s))
            }
        }
    }

    func match(_ path: [String]) -> [String]? {
        var captures: [String] = []
        for (i, segment) in segments.enumerated() {
            if case .rest = segment { return captures + path.dropFirst(i) }
            guard i < path.count else { return nil }
            switch segment {
            case .literal(let l): guard path[i] == l else { return nil }
            case .oneOf(let names): guard names.contains(path[i]) else { return nil }; captures.append(path[i])
            case .any: captures.append(path[i])
            case .rest: break
            }
        }
        return path.count == segments.count ? captures : nil
    }
}

struct Route: Sendable {
    typealias Handler = @Sendable (Router, HTTPRequest, [String]) throws -> HTTPResponse

    /// Methods the handler serves; nil for any. Another method gets `refusal`.
    let methods: Set<String>?
    let pattern: RoutePattern
    let credential: Credential
    let body: BodyRule
    /// The answer to a method the route does not serve (and to a body it does not take).
    let refusal: (status: Int, message: String)?
    let handler: Handler

    init(_ methods: Set<String>?, _ pattern: String, _ credential: Credential, body: BodyRule = .none,
         refusal: (status: Int, message: String)? = (405, "method not allowed"), _ handler: @escaping Handler) {
        self.methods = methods; self.pattern = RoutePattern(pattern); self.credential = credential
        self.body = body; self.refusal = refusal; self.handler = handler
    }

    /// The body this request may carry here, given its method and raw path.
    func bodyRule(method: String, path: String) -> BodyRule {
        switch body {
        case .ingest: method == "POST" ? .ingest : .none
        case .upload: method == "POST" || method == "PUT" ? body : .none
        case .webForm: method == "POST" && path.hasPrefix("/ui/") ? .webForm : .none
        case .none: .none
        }
    }
}
