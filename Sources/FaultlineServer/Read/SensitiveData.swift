// Sentry's default server-side scrubbing by key, and its credential patterns, applied to every
// event a person or a script reads (the issue page, the event API, an issue's stack), to issue
// titles (StackExtractor.firstLine) and to log lines (LogsPage.lines): a value under a key that names a secret
// (`password`, `secret`, `passwd`, `api_key`, `apikey`, `auth`, `credentials`, `mysql_pwd`,
// `privatekey`, `private_key`, `token`, `bearer`, anywhere in the key, any case) is shown as
// `[Filtered]`, whatever it holds; so are a `Bearer …` credential and a private key's PEM block in
// any string, and the password of a URL's user info. SDKs send such things unasked:
// sentry-cli's `send-event` puts the whole process environment in `extra.environ` (a
// SENTRY_AUTH_TOKEN among it), web frameworks the request's Authorization header.
// In events also, as Relay's defaults: session and CSRF cookies (by name, in `request.cookies`
// and a `Cookie` header), and credit-card, IBAN and US social-security numbers in any string
// (SensitiveNumbers) — except where Relay leaves them: `debug_meta`, frames' file paths, an
// exception's value and the User-Agent header; in the message (`logentry.formatted`, `message`)
// and a log line's body they read `[creditcard]`, `[iban]` and `[us-ssn]`, and email addresses
// `[email]` (EmailAddresses), as Relay writes them there.
// The stored event is the client's own bytes (grouping and backfill read them); what is filtered
// is what leaves the server. Tag values under such keys are filtered at ingest (EventFields.tags),
// as tags are stored and searched apart from the event. Not done: Relay's filtering of any value
// that merely contains one of the words (a breadcrumb "user authenticated" would read
// `[Filtered]`), and of user names in home-directory paths.
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
        scrub(event, depth: 0, Place())
    }

    /// Members whose value Sentry also takes as a list of [name, value] pairs.
    static let pairLists: Set<String> = ["headers", "cookies", "query_string", "env", "tags"]

    /// Session and CSRF cookies of common web frameworks (Relay's list): their values are
    /// whole sessions.
    static let sensitiveCookies: Set<String> = [
        "sentrysid", "sudo", "su", "session", "__session", "sessionid", "user_session", "symfony", "phpsessid", "fasthttpsessionid",
        "mysession", "irissessionid", "_vercel_jwt", "csrf", "xsrf", "_xsrf", "_csrf", "csrf-token", "csrf_token", "xsrf-token",
        "xsrf_token", "fastcsrf", "_iris_csrf"
    ]

    /// Where in the event a value lies, as far as the rules care.
    private struct Place {
        /// A list of [name, value] pairs (headers, cookies, query, tags): the name decides.
        var pairs = false
        /// `request.cookies`: each member (or pair) a cookie.
        var cookies = false
        /// Headers: a `Cookie` header holds cookies, the User-Agent is left as it is.
        var headers = false
        /// Under `exception`: its `value` is left to show as sent.
        var exception = false
        /// `logentry`: its `formatted` text is the message.
        var logentry = false
        /// What card numbers and SSNs become here.
        var numbers = Numbers.filter

        enum Numbers { case filter, name, keep }

        /// The place of `key`'s value in an object at this place, at `depth`.
        func member(_ key: String, depth: Int) -> Place {
            var p = Place(exception: exception, numbers: numbers)
            let lower = key.lowercased()
            p.pairs = SensitiveData.pairLists.contains(lower)
            p.cookies = lower == "cookies"
            p.headers = lower == "headers"
            if depth == 0 {
                if lower == "debug_meta" { p.numbers = .keep }
                if lower == "exception" { p.exception = true }
                if lower == "message" { p.numbers = .name }
                if lower == "logentry" { p.logentry = true }
            }
            if lower == "filename" || lower == "abs_path" || (exception && lower == "value") || (headers && lower == "user-agent") {
                p.numbers = .keep
            }
            if logentry && lower == "formatted" { p.numbers = .name }
            return p
        }
    }

    private static func scrub(_ v: JSONValue, depth: Int, _ place: Place) -> JSONValue {
        guard depth < JSONParser.maxDepth else { return v }
        switch v {
        case .object(let o):
            var out = o
            for m in o.members {
                let inner = place.member(m.key, depth: depth)
                if m.value != .null && (isSensitive(key: m.key) || (place.cookies && isSensitiveCookie(m.key))) {
                    out[m.key] = filtered
                } else if place.headers, m.key.lowercased() == "cookie", let header = m.value.stringValue {
                    out[m.key] = .string(cookieHeaderScrubbed(header))
                } else {
                    out[m.key] = scrub(m.value, depth: depth + 1, inner)
                }
            }
            return .object(out)
        case .array(let a):
            // In a pair list (headers, cookies, query, tags), the name decides for its value, as an
            // object's key does; elsewhere two strings in a list are just two strings.
            return .array(
                a.map { element in
                    if place.pairs, let pair = element.arrayValue, pair.count == 2, let name = pair[0].stringValue {
                        if pair[1] != .null && (isSensitive(key: name) || (place.cookies && isSensitiveCookie(name))) {
                            return .array([pair[0], filtered])
                        }
                        if place.headers, name.lowercased() == "cookie", let header = pair[1].stringValue {
                            return .array([pair[0], .string(cookieHeaderScrubbed(header))])
                        }
                        var valuePlace = place
                        valuePlace.pairs = false
                        if place.headers && name.lowercased() == "user-agent" { valuePlace.numbers = .keep }
                        return .array([pair[0], scrub(pair[1], depth: depth + 2, valuePlace)])
                    }
                    var inner = place
                    inner.pairs = false
                    return scrub(element, depth: depth + 1, inner)
                })
        case .string(let s):
            if place.cookies { return .string(cookieHeaderScrubbed(s)) }  // `cookies` sent as the header's text
            let text: String
            switch place.numbers {
            case .filter: text = scrubbedValue(s)
            case .name: text = scrubbedMessage(s)
            case .keep: text = scrubbedString(s) ?? s
            }
            return text == s ? v : .string(text)
        default:
            return v
        }
    }

    /// A string of an event (or a log line's attribute): credentials, card numbers and SSNs
    /// filtered.
    static func scrubbedValue(_ s: String) -> String {
        let text = scrubbedString(s) ?? s
        return SensitiveNumbers.replaced(in: text, card: "[Filtered]", iban: "[Filtered]", ssn: "[Filtered]") ?? text
    }

    /// A message (`logentry.formatted`, a log line's body): credentials filtered; card numbers,
    /// IBANs, SSNs and email addresses named, as Relay replaces them there.
    static func scrubbedMessage(_ s: String) -> String {
        var text = scrubbedString(s) ?? s
        text = SensitiveNumbers.replaced(in: text, card: "[creditcard]", iban: "[iban]", ssn: "[us-ssn]") ?? text
        return EmailAddresses.replaced(in: text, with: "[email]") ?? text
    }

    static func isSensitiveCookie(_ name: String) -> Bool { sensitiveCookies.contains(name.lowercased()) }

    /// A `Cookie` header's text (`a=1; sessionid=…`) with the values of sensitive cookies, and of
    /// cookies whose name names a secret, filtered.
    static func cookieHeaderScrubbed(_ header: String) -> String {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        var changed = false
        let kept = parts.map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return String(part) }
            let name = part[..<eq].trimmingCharacters(in: .whitespaces)
            guard isSensitiveCookie(name) || isSensitive(key: name) else { return String(part) }
            changed = true
            return part[...eq] + "[Filtered]"
        }
        return changed ? kept.joined(separator: ";") : header
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
