// Who is sending: the public key from X-Sentry-Auth, the query string, or the envelope's `dsn`.
import Foundation
import FaultlineProtocol

public enum SentryAuth {
    /// Parses `Sentry sentry_key=…, sentry_version=7, …` into its fields.
    public static func fields(ofHeader value: String) -> [String: String] {
        asciiFields(ofHeader: value) ?? characterFields(ofHeader: value)
    }

    /// The rule, over Characters.
    static func characterFields(ofHeader value: String) -> [String: String] {
        var out: [String: String] = [:]
        var body = Substring(value)
        while body.first == " " { body = body.dropFirst() }
        if body.utf8.count >= 7, body.prefix(7).lowercased() == "sentry " { body = body.dropFirst(7) }
        for part in body.split(separator: ",") {
            guard let eq = part.firstIndex(of: "=") else { continue }
            let k = part[..<eq].trimmingSpaces, v = part[part.index(after: eq)...].trimmingSpaces
            if !k.isEmpty { out[String(k)] = String(v) }
        }
        return out
    }

    /// The same split over the bytes of an ASCII header (every header a client sends; splitting
    /// Characters was ~8 % of an ingest's CPU); nil for anything else, which `fields` splits by
    /// Character (a combining mark after a comma joins it into one Character there).
    static func asciiFields(ofHeader value: String) -> [String: String]? {
        var value = value
        return value.withUTF8 { b -> [String: String]? in
            var i = 0
            for c in b where c >= 0x80 { return nil }
            func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }
            while i < b.count && b[i] == 0x20 { i += 1 }
            if b.count - i >= 7, b[i] | 0x20 == 0x73, b[i + 1] | 0x20 == 0x65, b[i + 2] | 0x20 == 0x6E, b[i + 3] | 0x20 == 0x74,
                b[i + 4] | 0x20 == 0x72, b[i + 5] | 0x20 == 0x79, b[i + 6] == 0x20
            {
                i += 7
            }  // "sentry "
            var out: [String: String] = [:]
            while i < b.count {
                var end = i
                while end < b.count && b[end] != 0x2C { end += 1 }  // ","
                if let eq = (i..<end).first(where: { b[$0] == 0x3D }) {  // "="
                    var ks = i, ke = eq, vs = eq + 1, ve = end
                    while ks < ke && isSpace(b[ks]) { ks += 1 }
                    while ke > ks && isSpace(b[ke - 1]) { ke -= 1 }
                    while vs < ve && isSpace(b[vs]) { vs += 1 }
                    while ve > vs && isSpace(b[ve - 1]) { ve -= 1 }
                    if ke > ks {
                        out[String(decoding: UnsafeBufferPointer(rebasing: b[ks..<ke]), as: UTF8.self)] =
                            String(decoding: UnsafeBufferPointer(rebasing: b[vs..<ve]), as: UTF8.self)
                    }
                }
                i = end + 1
            }
            return out
        }
    }

    /// The key from the header or query string, if the request carries one there.
    public static func key(in request: HTTPRequest) -> String? {
        if let h = request.header(HeaderName.sentryAuth), let k = fields(ofHeader: h)["sentry_key"], !k.isEmpty { return k }
        if let auth = request.header("authorization"), auth.lowercased().hasPrefix("sentry "),
            let k = fields(ofHeader: auth)["sentry_key"], !k.isEmpty
        {
            return k
        }
        if let k = request.query["sentry_key"], !k.isEmpty { return k }
        return nil
    }

    /// The key inside an envelope header's `dsn` field.
    public static func key(inDSN dsn: String) -> String? {
        guard let url = URLComponents(string: dsn), let user = url.user, !user.isEmpty else { return nil }
        return user
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
