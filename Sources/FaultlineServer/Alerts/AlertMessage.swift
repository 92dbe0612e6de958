// What an alert says: the generic JSON payload every channel starts from (documented in
// docs/SERVER.md, "Alerts"), and its renderings — Slack's `text`/`blocks`, and an email.
import Foundation
import FaultlineProtocol

enum AlertMessage {
    /// The payload enqueued for `kind` about `issue` (nil for a test alert).
    static func payload(
        kind: AlertKind, rule: AlertRule, project: ProjectRecord, issue: IssueRecord?, release: String?,
        extra: [String: JSONValue] = [:], publicURL: String?, now: Double
    ) -> JSONValue {
        var o: [String: JSONValue] = [
            "kind": .string(kind.rawValue), "rule": .int(rule.id), "created": .string(SentryTimestamp.rfc3339(now)),
            "project": ["id": .int(project.id), "slug": .string(project.slug), "name": .string(project.name)]
        ]
        if let i = issue {
            var issueJSON: [String: JSONValue] = [
                "id": .string(String(i.id)), "short_id": .string(Lifecycle.shortID(projectSlug: project.slug, issueID: i.id)),
                "title": .string(i.title), "culprit": .string(i.culprit), "count": .int(i.count),
                "first_seen": .string(SentryTimestamp.rfc3339(i.firstSeen)), "last_seen": .string(SentryTimestamp.rfc3339(i.lastSeen)),
                "symbolicated": .bool(i.symbolicated)
            ]
            if let release { issueJSON["release"] = .string(release) }
            if let base = publicURL { issueJSON["url"] = .string(base + "/ui/issues/\(i.id)") }
            o["issue"] = .object(issueJSON)
        }
        for (k, v) in extra { o[k] = v }
        return .object(o)
    }

    /// One line saying what happened, for subjects and Slack's `text`.
    static func headline(_ p: JSONValue) -> String {
        let issue = p["issue"]
        let id = issue?["short_id"]?.stringValue ?? ""
        let title = oneLine(issue?["title"]?.stringValue ?? "")
        switch AlertKind(rawValue: p["kind"]?.stringValue ?? "") ?? .test {
        case .newIssue: return "New issue \(id): \(title)"
        case .regression: return "Regression \(id): \(title)" + (issue?["release"]?.stringValue.map { " (again in \(oneLine($0)))" } ?? "")
        case .unmuted: return "No longer ignored \(id): \(title)"
        case .frequency:
            let n = p["frequency"]?["count"]?.int64Value ?? 0, m = p["frequency"]?["minutes"]?.int64Value ?? 0
            return "\(id) occurred \(n)+ times in \(m) min: \(title)"
        case .digest: return "\(id): \(p["digest"]?["events"]?.int64Value ?? 0) more events since the last alert: \(title)"
        case .symbolicated: return "Now symbolicated \(id): \(title)" + (p["previous_title"]?.stringValue.map { " (was \(oneLine($0)))" } ?? "")
        case .test: return "Test alert from Faultline (project \(p["project"]?["slug"]?.stringValue ?? "?"), rule \(p["rule"]?.int64Value ?? 0))"
        case .crashFree:
            let f = p["crash_free"]
            return "Crash-free sessions of \(oneLine(p["release"]?.stringValue ?? "?")): \(percent(f?["rate"]?.doubleValue ?? 0)) "
                + "(below \(percent((f?["threshold_percent"]?.doubleValue ?? 0) / 100))) over \(f?["minutes"]?.int64Value ?? 0) min"
        }
    }

    /// Title, culprit, release, counts, top frames and link as plain text lines.
    static func details(_ p: JSONValue) -> [String] {
        if let f = p["crash_free"] {
            return [
                "Release:  \(oneLine(p["release"]?.stringValue ?? "?"))",
                "Sessions: \(f["sessions"]?.int64Value ?? 0), crashed \(f["crashed"]?.int64Value ?? 0), in the last \(f["minutes"]?.int64Value ?? 0) min"
            ]
        }
        guard let issue = p["issue"] else { return ["This is a test: the channel works."] }
        var lines = ["Title:    \(oneLine(issue["title"]?.stringValue ?? ""))", "Culprit:  \(oneLine(issue["culprit"]?.stringValue ?? ""))"]
        if let r = issue["release"]?.stringValue { lines.append("Release:  \(oneLine(r))") }
        lines.append(
            "Events:   \(issue["count"]?.int64Value ?? 0) (first \(issue["first_seen"]?.stringValue ?? "?"), last \(issue["last_seen"]?.stringValue ?? "?"))")
        let frames = issue["top_frames"]?.arrayValue ?? []
        if !frames.isEmpty {
            lines.append("Top frames:")
            for f in frames.prefix(5) { lines.append("  " + oneLine(f.stringValue ?? "")) }
        }
        if let url = issue["url"]?.stringValue { lines.append(url) }
        return lines
    }

    /// Slack's incoming-webhook form.
    static func slack(_ p: JSONValue) -> JSONValue {
        let head = headline(p)
        let body = details(p).joined(separator: "\n")
        // `<!channel>` in a crash title must not ping anyone: escaped. A section's text is at most
        // 3,000 characters (Slack refuses the whole message past that), counted after escaping.
        return [
            "text": .string(slackEscape(head, within: slackSectionLimit)),
            "blocks": [
                ["type": "section", "text": ["type": "mrkdwn", "text": .string("*\(slackEscape(head, within: slackSectionLimit - 2))*")]],
                ["type": "section", "text": ["type": "mrkdwn", "text": .string("```\(slackEscape(body, within: slackSectionLimit - 6))```")]]
            ]
        ]
    }

    static let slackSectionLimit = 3_000

    /// `s` escaped for Slack and cut, when longer, to `limit` characters ending in "…", never
    /// inside an escape.
    static func slackEscape(_ s: String, within limit: Int) -> String {
        let escaped = slackEscape(s)
        guard escaped.count > limit else { return escaped }
        var cut = String(escaped.prefix(limit - 1))
        if let amp = cut.lastIndex(of: "&"), !cut[amp...].contains(";") { cut = String(cut[..<amp]) }
        return cut + "…"
    }

    /// An RFC 5322 message (UTF-8 body; the subject RFC 2047-encoded when not ASCII).
    static func email(_ p: JSONValue, from: String, to: String, now: Double, messageID: String) -> Data {
        let subject = "[Faultline] " + headline(p)
        var text = "Date: \(rfc5322Date(now))\r\nFrom: \(from)\r\nTo: \(to)\r\nSubject: \(encodedHeader(subject))\r\n"
        text += "Message-ID: <\(messageID)>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
        // Every line of the body without control characters (a bare CR, or CR and a dot, is how
        // a client's text could end the message early at a lenient relay); libcurl doubles a
        // line's leading dot itself (SMTP's end of data is a line with one dot).
        let lines = [headline(p), ""] + details(p) + [""]
        let body = lines.map(withoutControlCharacters).joined(separator: "\r\n")
        return Data((text + body).utf8)
    }

    static func percent(_ rate: Double) -> String {
        let p = (rate * 1000).rounded() / 10
        return (p == p.rounded() ? String(Int(p)) : String(p)) + " %"
    }

    /// Newlines and other control characters out: a title must never add a header or a line.
    static func oneLine(_ s: String) -> String { String(withoutControlCharacters(s).prefix(300)) }

    static func withoutControlCharacters(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    static func slackEscape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    static func encodedHeader(_ s: String) -> String {
        let clean = oneLine(s)
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) { return clean }
        // RFC 2047: encoded words of at most 75 characters (45 bytes of UTF-8 each, cut between
        // characters), folded onto continuation lines.
        var words: [String] = []
        var chunk = Data()
        for ch in clean {
            let bytes = Data(String(ch).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?" + chunk.base64EncodedString() + "?=")
                chunk = Data()
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?" + chunk.base64EncodedString() + "?=") }
        return words.joined(separator: "\r\n ")
    }

    static func rfc5322Date(_ t: Double) -> String {
        var time = time_t(t)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
            months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(days[Int(parts.tm_wday)]), \(parts.tm_mday) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) +0000"
    }
}
