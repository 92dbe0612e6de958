// The URL clients reach this server at, for the answers that name it (a DSN, the chunk-upload
// URL, a page's `Link`): the configured public URL (behind a TLS proxy the Host header names the
// inside), else the Host the request was sent to — when it is a host name or address with an
// optional port, nothing else — else 127.0.0.1.
import Foundation

enum ServerBaseURL {
    static func of(_ r: HTTPRequest, publicURL: String?) -> String {
        if let publicURL { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        if let host = r.header("host"), isHost(host) { return "http://" + host }
        return "http://127.0.0.1"
    }

    static func isHost(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 262
            && s.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                    || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: ":") || b == UInt8(ascii: "[")
                    || b == UInt8(ascii: "]") || b == UInt8(ascii: "_")  // Docker's service names
            }
    }

    /// A response whose `Link` names a path on this server, with that path made a whole URL, as
    /// Sentry writes it (`<https://…/api/0/…&cursor=…>; rel="next"`): clients that follow the link
    /// as a URL (Python requests' `links`) cannot use a bare path.
    static func absoluteLinks(_ response: HTTPResponse, _ r: HTTPRequest, publicURL: String?) -> HTTPResponse {
        guard response.headers.contains(where: { $0.0.lowercased() == "link" && $0.1.hasPrefix("</") }) else { return response }
        var out = response
        let base = of(r, publicURL: publicURL)
        out.headers = response.headers.map { name, value in
            guard name.lowercased() == "link", value.hasPrefix("</") else { return (name, value) }
            return (name, "<" + base + value.dropFirst())
        }
        return out
    }
}
