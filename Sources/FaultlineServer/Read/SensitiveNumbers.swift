// Credit-card, IBAN and US social-security numbers inside any string, as Sentry's default
// scrubbing finds them (Relay's `@creditcard`, `@iban` and `@usssn` rules, applied in that
// order, each over the text the one before left): a card number is a vendor prefix (Amex 34/37
// and one digit, Visa 4 and three digits, Mastercard 51-55 and two digits, Discover 65 and two
// digits or 6011) followed by 12 more digits, each of which may come after one dash or
// whitespace; an IBAN is a country code of Relay's list, two digits and 11-29 ASCII letters or
// digits; an SSN is `ddd-dd-dddd` in ASCII digits; each standing alone (word boundaries at both
// ends). Digits are read as Relay's regexes read them: `\d` is any script's decimal digit, a
// `[0-9]` class only ASCII. Like Relay, no Luhn or IBAN check digits: a timestamp of 16 digits
// starts with no vendor prefix and stays.

enum SensitiveNumbers {
    typealias Text = TextPatternReplacement

    /// `s` with every card number, IBAN and SSN replaced by `card`, `iban` and `ssn`; nil when it
    /// holds none.
    static func replaced(in s: String, card: String, iban: String, ssn: String) -> String? {
        guard mayHoldNumbers(s) else { return nil }
        var text = s, changed = false
        for (end, replacement) in [(cardNumberEnd, card), (ibanEnd, iban), (ssnEnd, ssn)] as [(([Unicode.Scalar], Int) -> Int?, String)] {
            let next = Text.replacing(in: text) { scalars, i in
                guard Text.isBoundary(scalars, i), let e = end(scalars, i), Text.isBoundary(scalars, e) else { return nil }
                return (e, replacement)
            }
            if let next {
                text = next
                changed = true
            }
        }
        return changed ? text : nil
    }

    /// Most strings can hold none of the numbers, and one pass over the bytes says so: too few
    /// ASCII digits and nothing beyond ASCII (another script's digits), or (a hex address, an id)
    /// no run of 15 digits and nothing that could separate groups of them (a dash, whitespace),
    /// and no two capitals followed by two digits (an IBAN's start).
    private static func mayHoldNumbers(_ s: String) -> Bool {
        var digits = 0, run = 0, longestRun = 0, separable = false, capitals = 0, ibanStart = false
        for b in s.utf8 {
            if b >= 0x80 { return true }
            if b &- 48 < 10 {
                digits += 1
                run += 1
                longestRun = max(longestRun, run)
                if run == 2 && capitals >= 2 { ibanStart = true }
            } else {
                run = 0
                if b == 45 || b == 32 || b &- 9 < 5 { separable = true }
            }
            capitals = b &- 65 < 26 ? capitals + 1 : (b &- 48 < 10 ? capitals : 0)
        }
        return longestRun >= 15 || (digits >= 9 && separable) || ibanStart
    }

    /// Where a card number that starts at `i` ends (its vendor prefix, then 12 digits each
    /// perhaps after one separator), or nil.
    private static func cardNumberEnd(_ s: [Unicode.Scalar], _ i: Int) -> Int? {
        func digit(_ k: Int) -> Int? { k < s.count ? Text.decimalDigit(s[k]) : nil }
        guard let d0 = digit(i), let d1 = digit(i + 1), let d2 = digit(i + 2) else { return nil }
        var k: Int
        switch (d0, d1) {
        case (3, 4), (3, 7): k = i + 3
        case (4, _), (5, 1...5), (6, 5): k = i + 4
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

    /// Where an IBAN that starts at `i` ends (country code, two digits, then a run of 11-29
    /// ASCII letters and digits that ends there), or nil.
    private static func ibanEnd(_ s: [Unicode.Scalar], _ i: Int) -> Int? {
        guard i + 4 <= s.count, Text.isASCIICapital(s[i]), Text.isASCIICapital(s[i + 1]),
            Text.decimalDigit(s[i + 2]) != nil, Text.decimalDigit(s[i + 3]) != nil,
            ibanCountries.contains(String(String.UnicodeScalarView(s[i..<(i + 2)])))
        else { return nil }
        var k = i + 4
        while k < s.count, Text.isASCIIAlphanumeric(s[k]) { k += 1 }
        return (11...29).contains(k - (i + 4)) ? k : nil
    }

    /// The countries of Relay's IBAN rule.
    private static let ibanCountries: Set<String> = [
        "AT", "AD", "AE", "AL", "AZ", "BA", "BE", "BG", "BH", "BR", "BY", "CH", "CR", "CY", "CZ", "DE", "DK", "DO", "EE", "EG", "ES", "FI",
        "FO", "FR", "GB", "GE", "GI", "GL", "GR", "GT", "HR", "HU", "IE", "IL", "IQ", "IS", "IT", "JO", "KW", "KZ", "LB", "LC", "LI", "LT",
        "LU", "LV", "LY", "MC", "MD", "ME", "MK", "MR", "MT", "MU", "NL", "NO", "PK", "PL", "PS", "PT", "QA", "RO", "RU", "RS", "SA", "SC",
        "SE", "SI", "SK", "SM", "ST", "SV", "TL", "TN", "TR", "UA", "VA", "VG", "XK", "DZ", "AO", "BJ", "BF", "BI", "CV", "CM", "CF", "TD",
        "KM", "CG", "CI", "DJ", "GQ", "GA", "GW", "HN", "IR", "MG", "ML", "MA", "MZ", "NI", "NE", "SN", "TG"
    ]

    /// Where an SSN (`ddd-dd-dddd`, ASCII digits) that starts at `i` ends, or nil.
    private static func ssnEnd(_ s: [Unicode.Scalar], _ i: Int) -> Int? {
        let shape: [Bool] = [true, true, true, false, true, true, false, true, true, true, true]  // digit, or dash
        guard i + shape.count <= s.count else { return nil }
        for (k, wantsDigit) in shape.enumerated() where wantsDigit ? !Text.isASCIIDigit(s[i + k]) : s[i + k] != "-" { return nil }
        return i + shape.count
    }
}
