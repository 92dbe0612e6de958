// Sentry's default server-side data scrubbing, applied to every event a person or a script reads
// (the issue page, the event API, an issue's stack): a value under a key that names a secret
// (`password`, `secret`, `passwd`, `api_key`, `apikey`, `auth`, `credentials`, `mysql_pwd`,
// `privatekey`, `private_key`, `token`, `bearer`, anywhere in the key, any case) is shown as
// `[Filtered]`, whatever it holds; so are a `Bearer …` credential and a private key's PEM block in
// any string, and the password of a URL's user info. SDKs send such things unasked:
// sentry-cli's `send-event` puts the whole process environment in `extra.environ` (a
// SENTRY_AUTH_TOKEN among it), web frameworks the request's Authorization header.
// The stored event is the client's own bytes (grouping and backfill read them); what is filtered
// is what leaves the server. Tag values under such keys are filtered at ingest (EventFields.tags),
// as tags are stored and searched apart from the event.
import FaultlineProtocol
import Foundation

enum SensitiveData {
    static let filtered: JSONValue = "[Filtered]"
    static let keyParts = [
        "password", "secret", "passwd", "api_key", "apikey", "auth", "credentials", "mysql_pwd", "privatekey", "private_key", "token", "bearer"
    ]

    /// Whether a key names a secret (Sentry's default list, as a part of the key, any case).
    static func isSensitive(key: String) -> Bool {
        let k = key.lowercased()
        return keyParts.contains { k.contains($0) }
    }

    /// The event with every secret it carries shown as `[Filtered]`.
    static func scrubbed(_ event: JSONValue) -> JSONValue {
        scrub(event, depth: 0)
    }

    private static func scrub(_ v: JSONValue, depth: Int) -> JSONValue {
        guard depth < JSONParser.maxDepth else { return v }
        switch v {
        case .object(let o):
            var out = o
            for m in o.members {
                out[m.key] = isSensitive(key: m.key) && m.value != .null ? filtered : scrub(m.value, depth: depth + 1)
            }
            return .object(out)
        case .array(let a):
            // A list of [name, value] pairs (headers, cookies, query, tags as Sentry also accepts
            // them): the name decides for the value, as an object's key does.
            if a.count == 2, let name = a[0].stringValue, isSensitive(key: name), a[1] != .null {
                return .array([a[0], filtered])
            }
            return .array(a.map { scrub($0, depth: depth + 1) })
        case .string(let s):
            return scrubbedString(s).map(JSONValue.string) ?? v
        default:
            return v
        }
    }

    /// A string with a credential in it, filtered; nil when it holds none.
    static func scrubbedString(_ s: String) -> String? {
        guard s.utf8.count >= 8 else { return nil }
        let lower = s.lowercased()
        if lower.contains("-----begin") && lower.contains("private key-----") { return "[Filtered]" }
        var out = s
        var changed = false
        if lower.contains("bearer ") {
            out = withoutBearerCredentials(out)
            changed = true
        }
        if out.contains("://"), out.contains("@"), let u = urlWithoutPassword(out) {
            out = u
            changed = true
        }
        return changed ? out : nil
    }

    /// "Bearer <credential>" anywhere (an Authorization header copied into a message or a
    /// breadcrumb): the credential goes, the word stays.
    static func withoutBearerCredentials(_ s: String) -> String {
        var out = ""
        var rest = Substring(s)
        while let r = rest.range(of: "bearer ", options: .caseInsensitive) {
            out += rest[..<r.upperBound]
            let credential = rest[r.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" && $0 != "'" && $0 != "," }
            if !credential.isEmpty { out += "[Filtered]" }
            rest = rest[r.upperBound...].dropFirst(credential.count)
        }
        return out + rest
    }

    /// `scheme://user:password@host…` as `scheme://user:[Filtered]@host…` (each one in the text).
    static func urlWithoutPassword(_ s: String) -> String? {
        var out = ""
        var rest = Substring(s)
        var changed = false
        while let scheme = rest.range(of: "://") {
            out += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" && !$0.isWhitespace }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                out += authority[...colon] + "[Filtered]"
                rest = rest[at...]
                changed = true
            }
        }
        return changed ? out + rest : nil
    }
}

extension StoredEvent {
    /// The stored event as people and scripts read it: secrets filtered (SensitiveData).
    static func decodeForReading(_ stored: Data) throws -> JSONValue {
        SensitiveData.scrubbed(try decode(stored))
    }
}
