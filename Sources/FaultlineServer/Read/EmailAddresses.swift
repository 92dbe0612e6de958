// Email addresses inside a message, as Relay's `@email` rule finds them (Relay replaces them in
// an event's message and a log line's body, not elsewhere): a local part of ASCII letters, digits
// and `.!#$%&'*+/=?^_`{|}~-` starting at a word boundary, `@`, then dot-separated labels of ASCII
// letters, digits and dashes whose last is two or more letters, ending at a word boundary.
//
// Linear in the text: each `@` is looked at once, its local part from the previous match's end,
// its domain once (a text of many dots and `@`s must not cost a scan per start position).

enum EmailAddresses {
    typealias Text = TextPatternReplacement

    /// `s` with every address replaced by `replacement`; nil when it holds none.
    static func replaced(in s: String, with replacement: String) -> String? {
        guard s.utf8.contains(UInt8(ascii: "@")) else { return nil }
        return Text.replacing(in: s) { c, from in
            var at = from
            while at < c.count {
                defer { at += 1 }
                guard c[at] == "@" else { continue }
                // The local part: the run of its characters before `@`, from where a word
                // boundary first falls in it (not before `from`, the previous match's end).
                var first = at
                while first > from, isLocal(c[first - 1]) { first -= 1 }
                var start = first
                while start < at, !Text.isBoundary(c, start) { start += 1 }
                if start < at, let end = domainEnd(c, after: at) { return (start, end, replacement) }
            }
            return nil
        }
    }

    /// Where the longest domain after the `@` at `at` ends: labels, the last of two letters or
    /// more (the end of any letter run of two or more in a label after the first, when a word
    /// boundary follows it), or nil.
    private static func domainEnd(_ c: [Unicode.Scalar], after at: Int) -> Int? {
        var best: Int? = nil
        var k = at + 1
        var label = 0, labelStart = k, lettersOnly = true
        while k < c.count {
            let u = c[k]
            if u == "." {
                guard k > labelStart else { break }  // an empty label ends every longer domain
                label += 1
                labelStart = k + 1
                lettersOnly = true
            } else if Text.isASCIIAlphanumeric(u) || u == "-" {
                if !(Text.isASCIICapital(u) || u.value &- 97 < 26) { lettersOnly = false }
                if label >= 1, lettersOnly, k + 1 - labelStart >= 2, Text.isBoundary(c, k + 1) { best = k + 1 }
            } else {
                break
            }
            k += 1
        }
        return best
    }

    private static func isLocal(_ u: Unicode.Scalar) -> Bool {
        Text.isASCIIAlphanumeric(u) || ".!#$%&'*+/=?^_`{|}~-".unicodeScalars.contains(u)
    }
}
