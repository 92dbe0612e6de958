// What a captured error says, as Sentry's exception values: its type and message — a
// LocalizedError's own description; an NSError's domain and code (Sentry's `ns_error`) — and the
// errors it wraps (NSError's NSUnderlyingErrorKey, as Foundation and most frameworks chain
// them), each its own exception value, the innermost first as Sentry orders a chain, linked by
// `exception_id`/`parent_id`. The server groups a chain by its causes too.
import Foundation
import FaultlineProtocol

enum CapturedErrorChain {
    /// The most errors of one chain sent (a cycle or a hostile chain ends here).
    static let maxDepth = 8

    struct Link {
        var type: String
        var value: String
        var nsError: (domain: String, code: Int)?
    }

    /// The error and the ones under it, outermost first.
    static func links(of error: any Error) -> [Link] {
        var out: [Link] = []
        var current: (any Error)? = error
        while let e = current, out.count < maxDepth {
            out.append(link(e))
            current = underlying(e)
        }
        return out
    }

    static func link(_ error: any Error) -> Link {
        let typeName = String(reflecting: type(of: error))
        if let localized = error as? any LocalizedError, let description = localized.errorDescription, !description.isEmpty {
            return Link(type: typeName, value: description)
        }
        if isFoundationError(error) {
            let ns = error as NSError
            return Link(type: ns.domain, value: "\(ns.localizedDescription) (Code: \(ns.code))", nsError: (ns.domain, ns.code))
        }
        return Link(type: typeName, value: String(describing: error))
    }

    /// An NSError made as one (every Swift error also bridges to NSError on the way, with its type
    /// name for a domain: that is not what it says about itself).
    static func isFoundationError(_ error: any Error) -> Bool {
        type(of: error) is NSError.Type
    }

    static func underlying(_ error: any Error) -> (any Error)? {
        guard isFoundationError(error) else { return nil }
        return (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error
    }

    /// Sentry's exception values for the chain: the innermost first, the captured error last with
    /// the stack and the capture's mechanism.
    static func exceptionValues(of error: any Error, stacktrace: JSONValue) -> [JSONValue] {
        let chain = links(of: error)
        return chain.enumerated().reversed().map { index, link in
            var mechanism: JSONObject = index == 0 ? ["type": "faultline.capture", "handled": true] : ["type": "chained", "source": "NSUnderlyingError"]
            mechanism["exception_id"] = .int(Int64(index))
            if index > 0 { mechanism["parent_id"] = .int(Int64(index - 1)) }
            if let ns = link.nsError { mechanism["meta"] = ["ns_error": ["domain": .string(ns.domain), "code": .int(Int64(ns.code))]] }
            var value: JSONObject = ["type": .string(link.type), "value": .string(link.value), "mechanism": .object(mechanism)]
            if index == 0 { value["stacktrace"] = stacktrace }
            return .object(value)
        }
    }
}
