// Text that came from uploads (log lines, archive names, releases) made safe to print: the
// characters a terminal or a bidi renderer acts on instead of showing are printed as visible
// escapes, so a log line cannot retitle the window, clear the screen or reorder what follows
// (docs/SERVER.md, "Limits").

import FaultlineProtocol

/// Visible escapes for control and bidi characters, for text and for JSON output.
public enum TerminalText {
    /// The characters escaped:
    /// - C0 controls U+0000–U+001F, tab and newline included (`logs list` is TAB-separated and a
    ///   line per record: a raw tab or newline in a field would forge columns or records);
    /// - DEL U+007F and the C1 controls U+0080–U+009F (U+009B is CSI to some terminals);
    /// - the bidi embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069 and the marks
    ///   U+200E, U+200F and U+061C (they reorder what a terminal or page shows after them).
    public static func needsEscape(_ v: UInt32) -> Bool { DisplayControls.isControl(v) || DisplayControls.isBidi(v) }

    /// `s` with each such character written as Swift spells it, `\u{1b}`. A backslash is left as
    /// it is: the escape is for reading, `--json` gives the exact text.
    public static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { needsEscape($0.value) }) else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for c in s.unicodeScalars {
            if needsEscape(c.value) { out += "\\u{" + String(c.value, radix: 16) + "}" } else { out.unicodeScalars.append(c) }
        }
        return out
    }

    /// A serialised JSON document with every such character that JSON allows raw (DEL, C1, bidi)
    /// written as `\u009b`. They can only occur inside strings, where the escape means the same
    /// character: the document parses to the same value. (C0 controls are escaped by every JSON
    /// writer inside strings; outside them they are whitespace and stay.)
    public static func visibleJSON(_ json: String) -> String {
        func escaped(_ v: UInt32) -> Bool { v >= 0x7F && needsEscape(v) }
        guard json.unicodeScalars.contains(where: { escaped($0.value) }) else { return json }
        var out = ""
        out.reserveCapacity(json.utf8.count + 16)
        for c in json.unicodeScalars {
            if escaped(c.value) {
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
