// Sentry's `X-Sentry-Rate-Limits` header: written by the server when it refuses, read by the SDK.

/// `<seconds>:<categories>:<scope>[:<reason>], …` — categories separated by `;`, none meaning
/// every category.
public enum RateLimitHeader {
    public struct Limit: Sendable, Equatable {
        public var seconds: Double
        /// Empty: every category.
        public var categories: [String]
        /// `key`, `project` or `organization`; nil when the header gave none.
        public var scope: String?

        public init(seconds: Double, categories: [String], scope: String? = nil) {
            self.seconds = seconds; self.categories = categories; self.scope = scope
        }
    }

    /// The header's value: whole seconds are written without a fraction, as Sentry writes them.
    public static func value(_ limits: [Limit]) -> String {
        limits.map { l in
            let whole = l.seconds.rounded(.towardZero)
            let seconds = whole == l.seconds && abs(whole) < 1e15 ? String(Int64(whole)) : String(l.seconds)
            return seconds + ":" + l.categories.joined(separator: ";") + (l.scope.map { ":" + $0 } ?? "")
        }.joined(separator: ", ")
    }

    /// Every limit whose seconds read as a number; others are skipped.
    public static func parse(_ value: String?) -> [Limit] {
        guard let value, !value.isEmpty else { return [] }
        return value.split(separator: ",").compactMap { part in
            let fields = trimmed(part).split(separator: ":", omittingEmptySubsequences: false)
            guard let seconds = fields.first.flatMap({ Double($0) }) else { return nil }
            let categories = fields.count > 1 ? fields[1].split(separator: ";").map(String.init) : []
            return Limit(seconds: seconds, categories: categories, scope: fields.count > 2 ? String(fields[2]) : nil)
        }
    }

    /// Without the spaces and tabs HTTP allows around list elements.
    static func trimmed(_ s: Substring) -> Substring {
        func blank(_ c: Character) -> Bool { c == " " || c == "\t" }
        guard let first = s.firstIndex(where: { !blank($0) }), let last = s.lastIndex(where: { !blank($0) }) else { return "" }
        return s[first...last]
    }
}
