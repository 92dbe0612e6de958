// Who is sending: the public key from X-Sentry-Auth, the query string, or the envelope's `dsn`.
import Foundation
import FaultlineProtocol

public enum SentryAuth {
    /// Parses `Sentry sentry_key=…, sentry_version=7, …` into its fields.
    public static func fields(ofHeader value: String) -> [String: String] {
        // Byte-level split (Foundation trimming showed up in ingest profiles).
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

    /// The key from the header or query string, if the request carries one there.
    public static func key(in request: HTTPRequest) -> String? {
        if let h = request.header("x-sentry-auth"), let k = fields(ofHeader: h)["sentry_key"], !k.isEmpty { return k }
        if let auth = request.header("authorization"), auth.lowercased().hasPrefix("sentry "),
           let k = fields(ofHeader: auth)["sentry_key"], !k.isEmpty { return k }
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
