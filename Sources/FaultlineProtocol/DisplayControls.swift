// Characters a terminal or a bidi renderer acts on instead of showing: the one set every output of
// client-supplied text escapes (the CLI's TerminalText, the pages' HTML.esc).

public enum DisplayControls {
    /// C0 controls U+0000–U+001F, DEL U+007F and the C1 controls U+0080–U+009F (U+009B is CSI
    /// to some terminals).
    public static func isControl(_ v: UInt32) -> Bool { v < 0x20 || (v >= 0x7F && v <= 0x9F) }

    /// The bidi embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069 and the marks
    /// U+200E, U+200F and U+061C: they reorder what is shown after them.
    public static func isBidi(_ v: UInt32) -> Bool {
        (v >= 0x202A && v <= 0x202E) || (v >= 0x2066 && v <= 0x2069) || v == 0x200E || v == 0x200F || v == 0x061C
    }
}
