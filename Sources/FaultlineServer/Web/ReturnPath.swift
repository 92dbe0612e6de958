// Where the login form sends the browser once logged in: the page that was asked for while
// logged out. The rule for what may be followed lives here alone, so the login redirect can
// never be made to point at another site (an open redirect) or to inject a header.
import Foundation

enum ReturnPath {
    /// The longest path kept (a list's filters fit many times over).
    static let maxLength = 2000

    /// The page `r` asked for, path and query, re-encoded: what the login form carries as `next`.
    static func of(_ r: HTTPRequest) -> String {
        let path = "/" + r.pathComponents.map(HTML.q).joined(separator: "/")
        let query = r.queryValues.keys.sorted().flatMap { key in r.queryValues[key, default: []].map { HTML.q(key) + "=" + HTML.q($0) } }
        return query.isEmpty ? path : path + "?" + query.joined(separator: "&")
    }

    /// `candidate` if it is a path on this server's pages (`/ui/…`) made only of printable ASCII
    /// without a backslash or a dot segment, nil otherwise. Starting with `/ui/` rules out a scheme (`https://`)
    /// and a protocol-relative `//host`; printable ASCII rules out CR/LF in the Location header.
    static func validated(_ candidate: String?) -> String? {
        guard let c = candidate, c.hasPrefix("/ui/"), c.utf8.count <= maxLength,
            c.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f && $0 != "\\" })
        else { return nil }
        // A dot segment (`/ui/../../api/0/…`, also percent-encoded) or an empty one would lead
        // out of the pages once a browser resolves it.
        let path = c.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard
            segments.allSatisfy({ s in
                let decoded = s.replacingOccurrences(of: "%2e", with: ".", options: .caseInsensitive)
                return decoded != "." && decoded != ".." && !(s.isEmpty && s.endIndex != path.endIndex)
            })
        else { return nil }
        return c
    }
}
