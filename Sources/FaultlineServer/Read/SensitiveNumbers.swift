// Credit-card and US social-security numbers inside any string, as Sentry's default scrubbing
// finds them (Relay's `@creditcard` and `@usssn` rules): a card number is a vendor prefix (Amex
// 34/37 and one digit, Visa 4 and three digits, Mastercard 51-55 and two digits, Discover 65 and
// two digits or 6011) followed by 12 more digits, each of which may come after one dash or
// whitespace, standing alone (no letter, digit or underscore touching either end); an SSN is
// `ddd-dd-dddd` standing alone. Like Relay, no Luhn check: a timestamp of 16 digits starts with
// no vendor prefix and stays. Only ASCII digits are read as digits.

enum SensitiveNumbers {
    /// `s` with every card number and SSN replaced by `card` and `ssn`; nil when it holds none.
    static func replaced(in s: String, card: String, ssn: String) -> String? {
        // Most strings cannot hold either number, one pass over the bytes says so: too few digits,
        // or (a hex address, an id) no run of 15 digits and nothing that could separate groups of
        // them (a dash, whitespace, any non-ASCII character).
        var digits = 0, run = 0, longestRun = 0, separable = false
        for b in s.utf8 {
            if b &- 48 < 10 {
                digits += 1
                run += 1
                longestRun = max(longestRun, run)
            } else {
                run = 0
                if b == 45 || b == 32 || b &- 9 < 5 || b >= 0x80 { separable = true }
            }
        }
        guard longestRun >= 15 || (digits >= 9 && separable) else { return nil }
        let scalars = Array(s.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0, copied = 0, changed = false
        while i < scalars.count {
            guard isDigit(scalars[i]), i == 0 || !isWordCharacter(scalars[i - 1]) else {
                i += 1
                continue
            }
            func standsAlone(_ end: Int?) -> Bool { end.map { $0 == scalars.count || !isWordCharacter(scalars[$0]) } ?? false }
            let cardEnd = cardNumberEnd(scalars, from: i), ssnEnd = ssnEnd(scalars, from: i)
            let isCard = standsAlone(cardEnd)
            guard let end = isCard ? cardEnd : standsAlone(ssnEnd) ? ssnEnd : nil else {
                i += 1
                continue
            }
            out.append(contentsOf: scalars[copied..<i])
            out.append(contentsOf: (isCard ? card : ssn).unicodeScalars)
            copied = end
            i = end
            changed = true
        }
        guard changed else { return nil }
        out.append(contentsOf: scalars[copied...])
        return String(out)
    }

    /// Where a card number that starts at `i` ends (its vendor prefix, then 12 digits each
    /// perhaps after one separator), or nil.
    private static func cardNumberEnd(_ s: [Unicode.Scalar], from i: Int) -> Int? {
        func digit(_ k: Int) -> UInt8? { k < s.count && isDigit(s[k]) ? UInt8(s[k].value - 48) : nil }
        guard let d0 = digit(i), let d1 = digit(i + 1), let d2 = digit(i + 2) else { return nil }
        var k: Int
        switch (d0, d1) {
        case (3, 4), (3, 7): k = i + 3
        case (4, _): k = i + 4
        case (5, 1...5), (6, 5): k = i + 4
        case (6, 0) where d2 == 1 && digit(i + 3) == 1: k = i + 4
        default: return nil
        }
        if k == i + 4 && digit(i + 3) == nil { return nil }
        for _ in 0..<12 {
            if k < s.count, s[k] == "-" || s[k].properties.isWhitespace, digit(k + 1) != nil { k += 1 }
            guard digit(k) != nil else { return nil }
            k += 1
        }
        return k
    }

    /// Where an SSN (`ddd-dd-dddd`) that starts at `i` ends, or nil.
    private static func ssnEnd(_ s: [Unicode.Scalar], from i: Int) -> Int? {
        let shape: [Bool] = [true, true, true, false, true, true, false, true, true, true, true]  // digit, or dash
        guard i + shape.count <= s.count else { return nil }
        for (k, wantsDigit) in shape.enumerated() where wantsDigit ? !isDigit(s[i + k]) : s[i + k] != "-" { return nil }
        return i + shape.count
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { c.value &- 48 < 10 }

    /// A character a word boundary does not fall next to: letters, digits (any script), `_`.
    private static func isWordCharacter(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c.properties.isAlphabetic || c.properties.numericType != nil
    }
}
