// Email addresses inside a message, as Relay's `@email` rule finds them (Relay replaces them in
// an event's message and a log line's body, not elsewhere): a local part of letters, digits and
// `.!#$%&'*+/=?^_`{|}~-` starting where a word starts, `@`, then dot-separated labels of letters,
// digits and dashes whose last is two or more letters, ending where a word ends.

enum EmailAddresses {
    /// `s` with every address replaced by `replacement`; nil when it holds none.
    static func replaced(in s: String, with replacement: String) -> String? {
        guard s.utf8.contains(UInt8(ascii: "@")) else { return nil }
        return TextPatternReplacement.replacing(in: s) { c, p in addressEnd(c, from: p).map { ($0, replacement) } }
    }

    /// Where an address that starts at `p` ends, or nil.
    private static func addressEnd(_ c: [Unicode.Scalar], from p: Int) -> Int? {
        // A word boundary before the first character (the start counts as outside a word).
        guard isLocal(c[p]), (p > 0 && isWord(c[p - 1])) != isWord(c[p]) else { return nil }
        var at = p
        while at < c.count, isLocal(c[at]) { at += 1 }
        guard at < c.count, c[at] == "@" else { return nil }
        let domainStart = at + 1
        var runEnd = domainStart
        while runEnd < c.count, isLabel(c[runEnd]) || c[runEnd] == "." { runEnd += 1 }
        // The longest prefix of the run that is labels ending in `.` and two letters or more, with
        // a word boundary after it (a dot or a dash after it is one; a letter or a digit is not).
        var end = runEnd
        while end > domainStart {
            let boundaryAfter = end < c.count ? !isWord(c[end]) : true
            if boundaryAfter && isDomain(c[domainStart..<end]) { return end }
            end -= 1
        }
        return nil
    }

    private static func isDomain(_ d: ArraySlice<Unicode.Scalar>) -> Bool {
        let labels = d.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isLabel) }), let last = labels.last else { return false }
        return last.count >= 2 && last.allSatisfy { $0.value &- 65 < 26 || $0.value &- 97 < 26 }
    }

    private static func isLocal(_ u: Unicode.Scalar) -> Bool {
        isASCIIAlphanumeric(u) || ".!#$%&'*+/=?^_`{|}~-".unicodeScalars.contains(u)
    }

    private static func isLabel(_ u: Unicode.Scalar) -> Bool { isASCIIAlphanumeric(u) || u == "-" }

    private static func isASCIIAlphanumeric(_ u: Unicode.Scalar) -> Bool { u.value &- 48 < 10 || u.value &- 65 < 26 || u.value &- 97 < 26 }

    private static func isWord(_ u: Unicode.Scalar) -> Bool { TextPatternReplacement.isWordCharacter(u) }
}
