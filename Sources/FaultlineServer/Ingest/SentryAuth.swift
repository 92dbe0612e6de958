// Who is sending: the public key from X-Sentry-Auth, the query string, or the envelope's `dsn`.
import Foundation
import FaultlineProtocol

public enum SentryAuth {
    /// Parses `Sentry sentry_key=…, sentry_version=7, …` into its fields.
    public static func fields(ofHeader value: String) -> [String: String] {
        var s = Substring(value.trimmingCharacters(in: .whitespaces))
        if s.lowercased().hasPrefix("sentry ") { s = s.dropFirst(7) }
        var out: [String: String] = [:]
        for part in s.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            out[kv[0].trimmingCharacters(in: .whitespaces)] = kv[1].trimmingCharacters(in: .whitespaces)
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
