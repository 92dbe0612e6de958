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
    /// without a backslash, nil otherwise. Starting with `/ui/` rules out a scheme (`https://`)
    /// and a protocol-relative `//host`; printable ASCII rules out CR/LF in the Location header.
    static func validated(_ candidate: String?) -> String? {
        guard let c = candidate, c.hasPrefix("/ui/"), c.utf8.count <= maxLength,
            c.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f && $0 != "\\" })
        else { return nil }
        return c
    }
}
