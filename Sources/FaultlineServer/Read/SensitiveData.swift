// Sentry's default server-side scrubbing by key, and its credential patterns, applied to every
// event a person or a script reads (the issue page, the event API, an issue's stack), to issue
// titles (StackExtractor.firstLine) and to log lines (LogsPage.lines): a value under a key that names a secret
// (`password`, `secret`, `passwd`, `api_key`, `apikey`, `auth`, `credentials`, `mysql_pwd`,
// `privatekey`, `private_key`, `token`, `bearer`, anywhere in the key, any case) is shown as
// `[Filtered]`, whatever it holds; so are a `Bearer …` credential and a private key's PEM block in
// any string, and the password of a URL's user info. SDKs send such things unasked:
// sentry-cli's `send-event` puts the whole process environment in `extra.environ` (a
// SENTRY_AUTH_TOKEN among it), web frameworks the request's Authorization header.
// The stored event is the client's own bytes (grouping and backfill read them); what is filtered
// is what leaves the server. Tag values under such keys are filtered at ingest (EventFields.tags),
// as tags are stored and searched apart from the event. Not done: Sentry's filtering of any value
// that merely contains one of the words, and of credit-card-like numbers.
import FaultlineProtocol
import Foundation

enum SensitiveData {
    static let filtered: JSONValue = "[Filtered]"
    static let keyParts = [
        "password", "secret", "passwd", "api_key", "apikey", "auth", "credentials", "mysql_pwd", "privatekey", "private_key", "token", "bearer"
    ]

    /// Whether a key names a secret (Sentry's default list, as a part of the key, any case).
    static func isSensitive(key: String) -> Bool {
        keyParts.contains { key.containsASCIICaseInsensitive($0) }
    }

    /// The event with every secret it carries shown as `[Filtered]`.
    static func scrubbed(_ event: JSONValue) -> JSONValue {
        scrub(event, depth: 0, pairs: false)
    }

    /// Members whose value Sentry also takes as a list of [name, value] pairs.
    static let pairLists: Set<String> = ["headers", "cookies", "query_string", "env", "tags"]

    private static func scrub(_ v: JSONValue, depth: Int, pairs: Bool) -> JSONValue {
        guard depth < JSONParser.maxDepth else { return v }
        switch v {
        case .object(let o):
            var out = o
            for m in o.members {
                out[m.key] =
                    isSensitive(key: m.key) && m.value != .null
                    ? filtered : scrub(m.value, depth: depth + 1, pairs: pairLists.contains(m.key.lowercased()))
            }
            return .object(out)
        case .array(let a):
            // In a pair list (headers, cookies, query, tags), the name decides for its value, as an
            // object's key does; elsewhere two strings in a list are just two strings.
            return .array(
                a.map { element in
                    if pairs, let pair = element.arrayValue, pair.count == 2, let name = pair[0].stringValue, isSensitive(key: name),
                        pair[1] != .null
                    {
                        return .array([pair[0], filtered])
                    }
                    return scrub(element, depth: depth + 1, pairs: false)
                })
        case .string(let s):
            return scrubbedString(s).map(JSONValue.string) ?? v
        default:
            return v
        }
    }

    /// A string with a credential in it, filtered; nil when it holds none.
    static func scrubbedString(_ s: String) -> String? {
        guard s.utf8.count >= 8 else { return nil }
        if s.containsASCIICaseInsensitive("-----begin") && s.containsASCIICaseInsensitive("private key-----") { return "[Filtered]" }
        var out = s
        var changed = false
        if s.containsASCIICaseInsensitive("bearer ") {
            out = withoutBearerCredentials(out)
            changed = true
        }
        if out.containsASCIICaseInsensitive("://"), out.utf8.contains(UInt8(ascii: "@")), let u = urlWithoutPassword(out) {
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
