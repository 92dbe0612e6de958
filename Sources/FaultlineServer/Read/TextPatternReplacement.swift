// The walk every value pattern of the scrubbing shares (SensitiveNumbers, EmailAddresses): the
// leftmost match from each position, replaced, the search going on after it, as a regex's
// replace-all does; and the character classes of Relay's regexes (Rust's, in Unicode mode).

enum TextPatternReplacement {
    /// `s` with each match replaced; nil when there is none. `match(scalars, i)` says whether a
    /// match starts at `i`: where it ends and what replaces it.
    static func replacing(in s: String, _ match: ([Unicode.Scalar], Int) -> (end: Int, replacement: String)?) -> String? {
        replacing(in: s) { scalars, from in
            for i in from..<scalars.count {
                if let (end, replacement) = match(scalars, i), end > i { return (i, end, replacement) }
            }
            return nil
        }
    }

    /// `s` with each match replaced; nil when there is none. `next(scalars, from)` finds the
    /// leftmost match that starts at `from` or later: its bounds and what replaces it.
    static func replacing(
        in s: String, next: ([Unicode.Scalar], Int) -> (start: Int, end: Int, replacement: String)?
    ) -> String? {
        let scalars = Array(s.unicodeScalars)
        var out = String.UnicodeScalarView()
        var copied = 0
        while copied < scalars.count, let (start, end, replacement) = next(scalars, copied), start >= copied, end > start {
            out.append(contentsOf: scalars[copied..<start])
            out.append(contentsOf: replacement.unicodeScalars)
            copied = end
        }
        guard !out.isEmpty || copied > 0 else { return nil }
        out.append(contentsOf: scalars[copied...])
        return String(out)
    }

    /// `\w`: a character a word boundary does not fall next to (letters, decimal digits of any
    /// script, combining marks, connector punctuation such as `_`, the joiners).
    static func isWordCharacter(_ c: Unicode.Scalar) -> Bool {
        let p = c.properties
        if p.isAlphabetic || p.isJoinControl { return true }
        switch p.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark, .enclosingMark, .connectorPunctuation: return true
        default: return false
        }
    }

    /// Whether a word boundary (`\b`) lies before position `i` (the ends count as outside a word).
    static func isBoundary(_ s: [Unicode.Scalar], _ i: Int) -> Bool {
        (i > 0 && isWordCharacter(s[i - 1])) != (i < s.count && isWordCharacter(s[i]))
    }

    /// `\d`: a decimal digit of any script, and its value.
    static func decimalDigit(_ c: Unicode.Scalar) -> Int? {
        if c.value &- 48 < 10 { return Int(c.value - 48) }
        guard c.value >= 0x80, c.properties.generalCategory == .decimalNumber, let v = c.properties.numericValue else { return nil }
        return Int(v)
    }

    static func isASCIIDigit(_ c: Unicode.Scalar) -> Bool { c.value &- 48 < 10 }
    static func isASCIICapital(_ c: Unicode.Scalar) -> Bool { c.value &- 65 < 26 }
    static func isASCIIAlphanumeric(_ c: Unicode.Scalar) -> Bool { isASCIIDigit(c) || isASCIICapital(c) || c.value &- 97 < 26 }
}
