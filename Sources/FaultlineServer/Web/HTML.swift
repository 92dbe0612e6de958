// Escaping for the web pages. Every value that came from an event, a debug file or a user is
// attacker-controlled: it enters a page only through these functions, never by interpolation.
import Foundation
import FaultlineProtocol

enum HTML {
    /// Text content and quoted attribute values: the five characters that can end a text run
    /// or an attribute (`&`, `<`, `>`, `"`, `'`) become entities. Control characters other than
    /// tab/newline are dropped so a value cannot smuggle bytes browsers treat specially.
    static func esc(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(ch)
            default:
                if ch.value < 0x20 || ch.value == 0x7f { continue }
                // Bidirectional controls would reorder what follows them (a title, a link's
                // text), and C1 controls: shown as what they are instead (DisplayControls).
                if DisplayControls.isBidi(ch.value) || DisplayControls.isControl(ch.value) {
                    out += "[U+" + String(ch.value, radix: 16, uppercase: true) + "]"
                    continue
                }
                out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    /// An event-derived URL for an `href`: only absolute http(s) URLs survive (no `javascript:`,
    /// `data:`, protocol-relative or whitespace-obfuscated schemes); nil means "show as text".
    static func safeExternalURL(_ s: String) -> String? {
        let t = s.trimmingCharacters(in: .whitespaces)
        guard let u = URL(string: t), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
            u.host?.isEmpty == false, !t.unicodeScalars.contains(where: { $0.value < 0x21 })
        else { return nil }
        return esc(t)
    }

    /// Percent-encodes a value for a query string or path segment we build ourselves.
    static func q(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// Shortens a value for display; the full value stays in a `title` attribute where useful.
    static func clip(_ s: String, _ n: Int) -> String { s.count <= n ? s : String(s.prefix(n - 1)) + "…" }

    /// Shortens an issue title ("what in where", Fingerprinter) without losing where: the part
    /// before " in <culprit>" gives way first, so a long message never hides the culprit.
    static func clipTitle(_ title: String, culprit: String, _ n: Int) -> String {
        let tail = " in " + culprit
        guard title.count > n, !culprit.isEmpty, title.hasSuffix(tail), tail.count < n * 2 / 3 else { return clip(title, n) }
        return clip(String(title.dropLast(tail.count)), n - tail.count) + tail
    }

    static func time(_ t: Double) -> String {
        guard t > 0 else { return "—" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: t)) + " UTC"
    }

    static func ago(_ t: Double, now: Double = Date().timeIntervalSince1970) -> String {
        let d = max(0, now - t)
        guard d.isFinite, d < 1e13 else { return "long ago" }  // rows written before timestamps were bounded
        if d < 90 { return "\(Int(d)) s ago" }
        if d < 5400 { return "\(Int(d / 60)) min ago" }
        if d < 129_600 { return "\(Int(d / 3600)) h ago" }
        return "\(Int(d / 86400)) d ago"
    }

    static func bytes(_ n: Int64) -> String {
        if n < 1024 { return "\(n) B" }
        if n < 1024 * 1024 { return String(format: "%.1f KiB", Double(n) / 1024) }
        return String(format: "%.1f MiB", Double(n) / 1048576)
    }
}

/// The escaping rules as public API, so tests and tools check the very functions pages use.
public enum WebEscaping {
    public static func esc(_ s: String) -> String { HTML.esc(s) }
    public static func safeURL(_ s: String) -> String? { HTML.safeExternalURL(s) }
}
