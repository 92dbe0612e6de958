// Credit-card, IBAN and US social-security numbers inside any string, as Sentry's default
// scrubbing finds them (Relay's `@creditcard`, `@iban` and `@usssn` rules): a card number is a
// vendor prefix (Amex 34/37 and one digit, Visa 4 and three digits, Mastercard 51-55 and two
// digits, Discover 65 and two digits or 6011) followed by 12 more digits, each of which may come
// after one dash or whitespace; an IBAN is a country code of Relay's list, two digits and 11-29
// letters or digits; an SSN is `ddd-dd-dddd`; each standing alone (no letter, digit or underscore
// touching either end). Like Relay, no Luhn or IBAN check digits: a timestamp of 16 digits
// starts with no vendor prefix and stays. Only ASCII digits are read as digits.

enum SensitiveNumbers {
    /// `s` with every card number, IBAN and SSN replaced by `card`, `iban` and `ssn`; nil when it
    /// holds none.
    static func replaced(in s: String, card: String, iban: String, ssn: String) -> String? {
        // Most strings can hold none of the numbers, and one pass over the bytes says so: too few
        // digits, or (a hex address, an id) no run of 15 digits and nothing that could separate
        // groups of them (a dash, whitespace, any non-ASCII character), and no two capitals
        // followed by two digits (an IBAN's start).
        var digits = 0, run = 0, longestRun = 0, separable = false, capitals = 0, ibanStart = false
        for b in s.utf8 {
            if b &- 48 < 10 {
                digits += 1
                run += 1
                longestRun = max(longestRun, run)
                if run == 2 && capitals >= 2 { ibanStart = true }
            } else {
                run = 0
                if b == 45 || b == 32 || b &- 9 < 5 || b >= 0x80 { separable = true }
            }
            capitals = b &- 65 < 26 ? capitals + 1 : (b &- 48 < 10 ? capitals : 0)
        }
        guard longestRun >= 15 || (digits >= 9 && separable) || ibanStart else { return nil }
        return TextPatternReplacement.replacing(in: s) { scalars, i in
            guard i == 0 || !isWordCharacter(scalars[i - 1]) else { return nil }
            func standsAlone(_ end: Int) -> Bool { end == scalars.count || !isWordCharacter(scalars[end]) }
            // Relay's order: cards, IBANs, SSNs (an IBAN starts with letters, the others with digits).
            if let end = cardNumberEnd(scalars, from: i), standsAlone(end) { return (end, card) }
            if let end = ibanEnd(scalars, from: i), standsAlone(end) { return (end, iban) }
            if let end = ssnEnd(scalars, from: i), standsAlone(end) { return (end, ssn) }
            return nil
        }
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

    /// Where an IBAN that starts at `i` ends (country code, two digits, then a run of 11-29
    /// ASCII letters and digits that ends there), or nil.
    private static func ibanEnd(_ s: [Unicode.Scalar], from i: Int) -> Int? {
        guard i + 4 <= s.count, isCapital(s[i]), isCapital(s[i + 1]), isDigit(s[i + 2]), isDigit(s[i + 3]),
            ibanCountries.contains(String(String.UnicodeScalarView(s[i..<(i + 2)])))
        else { return nil }
        var k = i + 4
        while k < s.count, isCapital(s[k]) || isDigit(s[k]) || s[k].value &- 97 < 26 { k += 1 }
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

    private static func isCapital(_ c: Unicode.Scalar) -> Bool { c.value &- 65 < 26 }

    /// Where an SSN (`ddd-dd-dddd`) that starts at `i` ends, or nil.
    private static func ssnEnd(_ s: [Unicode.Scalar], from i: Int) -> Int? {
        let shape: [Bool] = [true, true, true, false, true, true, false, true, true, true, true]  // digit, or dash
        guard i + shape.count <= s.count else { return nil }
        for (k, wantsDigit) in shape.enumerated() where wantsDigit ? !isDigit(s[i + k]) : s[i + k] != "-" { return nil }
        return i + shape.count
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { c.value &- 48 < 10 }

    private static func isWordCharacter(_ c: Unicode.Scalar) -> Bool { TextPatternReplacement.isWordCharacter(c) }
}
