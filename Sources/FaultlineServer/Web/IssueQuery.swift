// The issues list's filters and order, and the search language that sets them: the web list's
// search box and Sentry's `?query=` on the issues API (list and bulk update) read it here, so a
// term means the same wherever it is typed.
import Foundation
import FaultlineProtocol

/// Filters and order of the issues list; everything here comes from the query string.
struct IssueQuery {
    /// `id`: newest issue first by id, which no new event moves (what a bulk update pages by).
    enum Sort: String, CaseIterable { case lastSeen = "last_seen", firstSeen = "first_seen", count, id }
    var sort: Sort = .lastSeen
    var status: String = "unresolved"  // one of `statuses`
    /// The list's status views: an issue's own status, or every issue.
    static let statuses = ["unresolved", "resolved", "ignored", "all"]
    var release: String = ""
    var environment: String = ""
    var text: String = ""
    /// `key:value` terms over the tags grouping recorded (`web_stack_tags`): every one must match.
    var tags: [EventTag] = []
    /// Keyset cursor: the sort value and id of the last row of the previous page.
    var after: (value: Double, id: Int64)?
    /// Keyset cursor backwards (the web list's previous page): the sort value and id of the first
    /// row of the page after; the rows just before it come back nearest first (`issueHeads`).
    var before: (value: Double, id: Int64)?
    var limit = 50
    /// The terms of `text` the search could not apply (applyTerms): the page says so.
    var notApplied: [String] = []
    /// The most tag terms one search applies (each is a subquery).
    static let maxTagTerms = 5
}

extension IssueQuery {
    /// `key:value` terms in `text` (`release:1.2 env:prod disk full`) set the filters they name
    /// (`release:`, `env:`/`environment:`, `is:unresolved|resolved|ignored|muted|all`); any other
    /// `key:value` is a tag the issue's events carried (`os:` means `os.name:`); the other words
    /// stay the title and culprit search. A value or a phrase may be quoted (`release:"1.2 beta"`,
    /// `"disk full"`); a term wins over a menu's value. Returns the terms it could not apply —
    /// Sentry's that this server does not know (`is:assigned`, `has:user`, `assigned:me`,
    /// `firstSeen:-24h`, a negated `!key:value`) and an unclosed quote — which stay words: the API
    /// refuses them rather than search for their text or read them as tags (`!mod:3` found nothing).
    mutating func applyTerms() -> [String] {
        var words: [String] = []
        var unknown: [String] = []
        let (tokens, unbalanced) = Self.tokens(text)
        if unbalanced { unknown.append("an unclosed \"") }
        for token in tokens {
            guard !token.phrase, let colon = token.text.firstIndex(of: ":") else { words.append(token.text); continue }
            let key = token.text[..<colon].lowercased()
            let value = String(token.text[token.text.index(after: colon)...].prefix(200))
            guard !value.isEmpty else { words.append(token.text); continue }
            if key.hasPrefix("!") || Self.sentryTermsNotApplied.contains(key) {
                unknown.append(token.text)
                words.append(token.text)
                continue
            }
            switch key {
            case "release": release = value
            case "env", "environment": environment = value
            case "is" where Self.statuses.contains(value): status = value
            case "is" where value == "muted": status = "ignored"
            case "is":
                unknown.append(token.text)
                words.append(token.text)
            case _ where tags.count < Self.maxTagTerms: tags.append(EventTag(key: key == "os" ? "os.name" : key, value: value))
            default: words.append(token.text)
            }
        }
        text = words.joined(separator: " ")
        notApplied = unknown
        return unknown
    }

    /// Sentry's search keys for what this server does not filter by (assignment, bookmarks, age
    /// and counts, `has:`), lower-cased: never read as tags of those names.
    static let sentryTermsNotApplied: Set<String> = [
        "has", "assigned", "assigned_or_suggested", "bookmarks", "subscribed", "firstseen", "lastseen", "age", "timesseen", "times_seen",
        "firstrelease", "first_release", "issue.category", "issue.type", "issue.priority", "issue.seer_actionability", "event.timestamp"
    ]

    /// A search's tokens, split at spaces outside double quotes, the quotes dropped; a token that
    /// begins with a quote is a phrase, never a term; and whether a quote was left open.
    private static func tokens(_ text: String) -> (tokens: [(text: String, phrase: Bool)], unbalanced: Bool) {
        var out: [(text: String, phrase: Bool)] = []
        var current = "", inQuotes = false, phrase = false, started = false
        for ch in text {
            if ch == "\"" {
                if !started { phrase = true }
                started = true
                inQuotes.toggle()
            } else if ch == " " && !inQuotes {
                if started && !current.isEmpty { out.append((current, phrase)) }
                (current, phrase, started) = ("", false, false)
            } else {
                current.append(ch)
                started = true
            }
        }
        if started && !current.isEmpty { out.append((current, phrase)) }
        return (out, inQuotes)
    }

    /// The search box's text for `q`: its words and its tag terms (the other terms are in the menus).
    var searchText: String {
        ([text] + tags.map { "\($0.key):\($0.value)" }).filter { !$0.isEmpty }.joined(separator: " ")
    }
}
