// Sentry's default server-side scrubbing by key, and its credential patterns, applied to every
// event a person or a script reads (the issue page, the event API, an issue's stack), to issue
// titles (StackExtractor.firstLine) and to log lines (LogsPage.lines): a value under a key that names a secret
// (`password`, `secret`, `passwd`, `api_key`, `apikey`, `auth`, `credentials`, `mysql_pwd`,
// `privatekey`, `private_key`, `token`, `bearer`, anywhere in the key, any case) is shown as
// `[Filtered]`, whatever it holds; so are a `Bearer …` credential and a private key's PEM block in
// any string, and the password of a URL's user info. SDKs send such things unasked:
// sentry-cli's `send-event` puts the whole process environment in `extra.environ` (a
// SENTRY_AUTH_TOKEN among it), web frameworks the request's Authorization header.
// In events also, as Relay's defaults: session and CSRF cookies (SensitiveCookies), and
// credit-card, IBAN and US social-security numbers in any string (SensitiveNumbers) — except
// where Relay leaves them: `debug_meta`, frames' file paths, an exception's own value and the
// User-Agent header; in the message (`logentry.formatted`, `message`), a log line's body and a
// message's title they read `[creditcard]`, `[iban]` and `[us-ssn]`, and email addresses
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

    /// Where in the event a value lies, as far as the rules care.
    private struct Place {
        /// A list of [name, value] pairs (headers, cookies, query, tags): the name decides.
        var pairs = false
        /// `request.cookies`: each member (or pair) a cookie.
        var cookies = false
        /// Headers: a `Cookie` header holds cookies, the User-Agent is left as it is.
        var headers = false
        /// Where in `exception` (the only `value` left as sent is an exception's own).
        var exception = ExceptionPart.none
        /// `logentry`: its `formatted` text is the message.
        var logentry = false
        /// What card numbers, IBANs and SSNs become here.
        var numbers = Numbers.filter

        enum Numbers { case filter, name, keep }
        /// `exception` itself (an object with `values`, one exception, or a bare list), its
        /// `values` list, and one exception in it.
        enum ExceptionPart { case none, container, values, exception }

        /// The place of `key`'s value in an object at this place, at `depth`.
        func member(_ key: String, depth: Int) -> Place {
            var p = Place(numbers: numbers)
            let lower = key.lowercased()
            p.pairs = SensitiveData.pairLists.contains(lower)
            p.cookies = lower == "cookies"
            p.headers = lower == "headers"
            if depth == 0 {
                if lower == "debug_meta" { p.numbers = .keep }
                if lower == "exception" { p.exception = .container }
                if lower == "message" { p.numbers = .name }
                if lower == "logentry" { p.logentry = true }
            }
            if exception == .container && lower == "values" { p.exception = .values }
            let exceptionValue = (exception == .container || exception == .exception) && lower == "value"
            if lower == "filename" || lower == "abs_path" || exceptionValue { p.numbers = .keep }
            if logentry && lower == "formatted" { p.numbers = .name }
            return p
        }

        /// The place of an element of a list at this place.
        var element: Place {
            var p = self
            p.pairs = false
            p.cookies = false
            p.exception = exception == .container || exception == .values ? .exception : .none
            return p
        }
    }

    private static func scrub(_ v: JSONValue, depth: Int, _ place: Place) -> JSONValue {
        guard depth < JSONParser.maxDepth else { return v }
        switch v {
        case .object(let o):
            var out = o
            for m in o.members { out[m.key] = scrubbed(named: m.key, m.value, in: place, depth: depth) }
            return .object(out)
        case .array(let a):
            // In a pair list (headers, cookies, query, tags), the name decides for its value, as an
            // object's key does; elsewhere two strings in a list are just two strings.
            return .array(
                a.map { element in
                    if place.pairs, let pair = element.arrayValue, pair.count == 2, let name = pair[0].stringValue {
                        return .array([pair[0], scrubbed(named: name, pair[1], in: place, depth: depth + 1)])
                    }
                    return scrub(element, depth: depth + 1, place.element)
                })
        case .string(let s):
            // `cookies` sent as the header's text.
            if place.cookies { return .string(scrubbedValue(SensitiveCookies.headerScrubbed(s))) }
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

    /// A value under a name (an object's key, or the name of a pair in a pair list) at `place`:
    /// the name decides first, then the value is scrubbed where it lies.
    private static func scrubbed(named name: String, _ value: JSONValue, in place: Place, depth: Int) -> JSONValue {
        if value != .null && (isSensitive(key: name) || (place.cookies && SensitiveCookies.isSensitive(name))) { return filtered }
        let lower = name.lowercased()
        if place.headers, lower == "cookie", let header = value.stringValue {
            return .string(scrubbedValue(SensitiveCookies.headerScrubbed(header)))
        }
        var inner = place.member(name, depth: depth)
        if place.pairs {  // a pair's value: what it is named says what it is, as for a member
            inner = place.element
            inner.numbers = place.numbers
        }
        if place.headers && lower == "user-agent" { inner.numbers = .keep }
        return scrub(value, depth: depth + 1, inner)
    }

    /// A string of an event (or a log line's attribute): credentials, card numbers, IBANs and
    /// SSNs filtered.
    static func scrubbedValue(_ s: String) -> String {
        let text = scrubbedString(s) ?? s
        return SensitiveNumbers.replaced(in: text, card: "[Filtered]", iban: "[Filtered]", ssn: "[Filtered]") ?? text
    }

    /// A message (`logentry.formatted`, a log line's body, an issue's title from a message):
    /// credentials filtered; email addresses, card numbers, IBANs and SSNs named, as Relay
    /// replaces them there (emails first, Relay's order).
    static func scrubbedMessage(_ s: String) -> String {
        var text = scrubbedString(s) ?? s
        text = EmailAddresses.replaced(in: text, with: "[email]") ?? text
        return SensitiveNumbers.replaced(in: text, card: "[creditcard]", iban: "[iban]", ssn: "[us-ssn]") ?? text
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
