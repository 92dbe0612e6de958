// The walk every value pattern of the scrubbing shares (SensitiveNumbers, EmailAddresses): the
// leftmost match from each position, replaced, the search going on after it, as a regex's
// replace-all does.

enum TextPatternReplacement {
    /// `s` with each match replaced; nil when there is none. `match(scalars, i)` says whether a
    /// match starts at `i`: where it ends and what replaces it.
    static func replacing(in s: String, _ match: ([Unicode.Scalar], Int) -> (end: Int, replacement: String)?) -> String? {
        let scalars = Array(s.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0, copied = 0, changed = false
        while i < scalars.count {
            guard let (end, replacement) = match(scalars, i), end > i else {
                i += 1
                continue
            }
            out.append(contentsOf: scalars[copied..<i])
            out.append(contentsOf: replacement.unicodeScalars)
            copied = end
            i = end
            changed = true
        }
        guard changed else { return nil }
        out.append(contentsOf: scalars[copied...])
        return String(out)
    }

    /// A character a word boundary does not fall next to: letters, digits (any script), `_`.
    static func isWordCharacter(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c.properties.isAlphabetic || c.properties.numericType != nil
    }
}
