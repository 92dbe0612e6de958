// Recognising and redacting PostgreSQL URLs.
import Foundation

/// How a database URL is recognised and shown (never with its password).
public enum PostgresURL {
    public static func isPostgres(_ s: String) -> Bool { s.hasPrefix("postgres://") || s.hasPrefix("postgresql://") }

    public static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url) else { return "postgres://…" }
        if c.password != nil { c.password = "***" }
        return c.string ?? "postgres://…"
    }
}
