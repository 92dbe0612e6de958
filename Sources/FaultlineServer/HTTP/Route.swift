// One row of the server's route table (Router.routes): method, path pattern, required credential,
// what body the route takes, and its handler. Preflight (before the body), the body limit and
// dispatch all read the same row.
import Foundation

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

    init(
        _ methods: Set<String>?, _ pattern: String, _ credential: Credential, body: BodyRule = .none,
        refusal: (status: Int, message: String)? = (405, "method not allowed"), _ handler: @escaping Handler
    ) {
        self.methods = methods; self.pattern = RoutePattern(pattern); self.credential = credential
        self.body = body; self.refusal = refusal; self.handler = handler
    }

    /// The body this request may carry here, given its method and raw path.
    func bodyRule(method: String, path: String) -> BodyRule {
        switch body {
        case .ingest: method == "POST" ? .ingest : .none
        case .upload: method == "POST" || method == "PUT" ? body : .none
        case .webForm: method == "POST" && path.hasPrefix("/ui/") ? .webForm : .none
        case .logArchive: method == "POST" ? .logArchive : .none
        case .none: .none
        }
    }
}
