// Recognising and redacting PostgreSQL URLs.
import Foundation

/// How a database URL is recognised and shown (never with its password).
public enum PostgresURL {
    public static func isPostgres(_ s: String) -> Bool { s.hasPrefix("postgres://") || s.hasPrefix("postgresql://") }

    /// The URL with every password libpq would read from it masked: the userinfo's and a
    /// `password=` query parameter's. A keyword/value connection string (`host=… password=…`),
    /// which libpq accepts as well, gets its `password` value masked.
    public static func redacted(_ url: String) -> String {
        guard isPostgres(url) else { return redactedKeywordValue(url) }
        guard var c = URLComponents(string: url) else { return "postgres://…" }
        if c.password != nil { c.password = "***" }
        // libpq decodes parameter names as well as values, so `pass%77ord=` is a password too.
        if let items = c.queryItems, items.contains(where: { $0.name.lowercased() == "password" }) {
            c.queryItems = items.map { $0.name.lowercased() == "password" ? URLQueryItem(name: $0.name, value: "***") : $0 }
        }
        return c.string ?? "postgres://…"
    }

    /// libpq's `keyword = value` form: a value is a word or a single-quoted string with
    /// backslash escapes.
    private static func redactedKeywordValue(_ conninfo: String) -> String {
        let pattern = #"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s']\S*)"#
        guard let re = try? NSRegularExpression(pattern: pattern) else { return "postgres://…" }
        let whole = NSRange(conninfo.startIndex..., in: conninfo)
        return re.stringByReplacingMatches(in: conninfo, range: whole, withTemplate: "$1***")
    }
}
