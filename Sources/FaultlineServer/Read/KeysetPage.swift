// Keyset pages for the JSON lists that read bounded data (logs, releases, sessions): `?limit`
// (1…1000) and `?cursor` (the page's position: where the previous page stopped, never an offset,
// so a late page costs what the first does). Answers are JSON arrays, Sentry's shape, with the
// next page in a `Link` header as Sentry writes it (`rel="next"; results="true"; cursor="…"`),
// which sentry-cli follows. A cursor is opaque to clients: its text hex-encoded, so it needs no
// escaping in a URL or a header whatever it holds (a release name).
import Foundation
import FaultlineProtocol

struct KeysetPage {
    static let defaultLimit = 100
    static let maxLimit = 1000
    static let maxCursorBytes = 512

    let limit: Int
    /// The decoded cursor; nil on the first page.
    let cursor: String?

    /// The request's page, or the 400 to answer for a cursor this server did not write.
    static func of(_ r: HTTPRequest) -> Result<KeysetPage, KeysetError> {
        let limit = min(max(Int(r.query["limit"] ?? "") ?? defaultLimit, 1), maxLimit)
        guard let raw = r.query["cursor"], !raw.isEmpty else { return .success(KeysetPage(limit: limit, cursor: nil)) }
        guard raw.utf8.count <= 2 * maxCursorBytes, let bytes = HexBytes.decode(raw), let text = String(bytes: bytes, encoding: .utf8) else {
            return .failure(KeysetError())
        }
        return .success(KeysetPage(limit: limit, cursor: text))
    }

    struct KeysetError: Error {
        var response: HTTPResponse { .detail(400, "cursor is not one this server wrote (take it from the Link header)") }
    }

    static func encode(_ cursor: String) -> String { HexBytes.encode(Array(cursor.utf8)) }

    /// `items` as a JSON array with a `Link` to the page after `next` (nil: this is the last page).
    static func response(_ items: [JSONValue], next: String?, request r: HTTPRequest) -> HTTPResponse {
        let cursor = next.map(encode) ?? ""
        var query = r.query.filter { $0.key != "cursor" }.sorted { $0.key < $1.key }.map { "\(escape($0.key))=\(escape($0.value))" }
        query.append("cursor=\(cursor)")
        let link = "<\(escapePath(r.path))?\(query.joined(separator: "&"))>; rel=\"next\"; results=\"\(next != nil)\"; cursor=\"\(cursor)\""
        return .json(.array(items), headers: [("Link", link)])
    }

    /// Percent-encodes everything but ASCII letters, digits and `-._~` (no header or URL
    /// delimiter can pass).
    static func escape(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(b)))
            default: out += String(format: "%%%02X", b)
            }
        }
        return out
    }

    static func escapePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(separator: "/")
    }
}
