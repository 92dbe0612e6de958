// Sentry timestamps: seconds since the epoch as a number, or an RFC 3339 string. Read and written
// here once, by hand (no Foundation formatter: `faultline` links FoundationEssentials only).
import FoundationEssentials
import Glibc

public enum SentryTimestamp {
    /// Seconds since the epoch from a number or an RFC 3339 string (`YYYY-MM-DDTHH:MM:SS[.frac]`
    /// with `Z` or `±hh:mm`; a string without a zone is read as UTC). nil when neither.
    public static func seconds(_ v: JSONValue?) -> Double? {
        guard let v else { return nil }
        if let d = v.doubleValue { return d }
        return v.stringValue.flatMap(seconds(rfc3339:))
    }

    public static func seconds(rfc3339 s: String) -> Double? {
        // Checked by hand first (a fraction of 100 digits once made ICU's formatter divide by
        // zero, found by the envelope fuzzer), then counted by hand.
        guard let (text, _) = canonical(s) else { return nil }
        return seconds(canonical: Array(text.utf8))
    }

    /// The instant of a `canonical` string (`YYYY-MM-DDTHH:MM:SS[.mmm]` then `Z` or `±hh:mm`),
    /// in the proleptic Gregorian calendar RFC 3339 names. Fields are checked as Foundation's
    /// ISO8601DateFormatter (ICU) checked them: month 1–12, day 1–31 (the 30th of February is
    /// the 2nd of March), hour 0–24, minute and second 0–59; nil otherwise. The arithmetic is
    /// Foundation's too (milliseconds over the 2001 reference date), so the Double is the same
    /// to the last bit (SentryTimestampTests). Unlike ICU, dates before 1582-10-15 stay
    /// Gregorian (ICU switched to the Julian calendar); no SDK sends them.
    static func seconds(canonical b: [UInt8]) -> Double? {
        func number(_ r: Range<Int>) -> Int64 { r.reduce(0) { $0 * 10 + Int64(b[$1] - 0x30) } }
        let year = number(0..<4), month = number(5..<7), day = number(8..<10)
        let hour = number(11..<13), minute = number(14..<16), second = number(17..<19)
        guard (1...12).contains(month), (1...31).contains(day), hour <= 24, minute <= 59, second <= 59 else { return nil }
        var i = 19, millis: Int64 = 0
        if b[i] == 0x2E { millis = number(20..<23); i = 23 }
        var offset: Int64 = 0
        if b[i] == 0x2B || b[i] == 0x2D {
            let minutes = number(i + 4..<i + 6)
            guard minutes <= 59 else { return nil }
            offset = (number(i + 1..<i + 3) * 60 + minutes) * 60 * (b[i] == 0x2D ? -1 : 1)
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let ms = ((days * 86_400 + hour * 3_600 + minute * 60 + second) - offset) * 1_000 + millis
        let sinceReferenceDate = Double(ms) / 1_000 - 978_307_200
        return sinceReferenceDate + 978_307_200
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `YYYY-MM-DDTHH:MM:SS[.f…]` then `Z`, `±hh:mm` or nothing (UTC), ASCII digits only, at most
    /// 9 fraction digits; returned with the fraction cut to milliseconds and an explicit zone.
    static func canonical(_ s: String) -> (String, Bool)? {
        let b = Array(s.utf8)
        guard b.count >= 19, b.count <= 40 else { return nil }
        func digits(_ r: Range<Int>) -> Bool { r.allSatisfy { b[$0] >= 0x30 && b[$0] <= 0x39 } }
        guard digits(0..<4), b[4] == 0x2D, digits(5..<7), b[7] == 0x2D, digits(8..<10), b[10] == 0x54 || b[10] == 0x74,
            digits(11..<13), b[13] == 0x3A, digits(14..<16), b[16] == 0x3A, digits(17..<19)
        else { return nil }
        var text = String(decoding: b[0..<19], as: UTF8.self)
        var i = 19
        var hasFraction = false
        if i < b.count, b[i] == 0x2E {
            let start = i + 1
            i = start
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard i > start, i - start <= 9 else { return nil }
            let fraction = String(decoding: b[start..<min(i, start + 3)], as: UTF8.self)
            text += "." + fraction + String(repeating: "0", count: 3 - fraction.count)
            hasFraction = true
        }
        if i == b.count { return (text + "Z", hasFraction) }
        if b[i] == 0x5A || b[i] == 0x7A { return i + 1 == b.count ? (text + "Z", hasFraction) : nil }
        guard b[i] == 0x2B || b[i] == 0x2D, b.count - i == 6, digits(i + 1..<i + 3), b[i + 3] == 0x3A, digits(i + 4..<i + 6) else { return nil }
        return (text + String(decoding: b[i...], as: UTF8.self), hasFraction)
    }

    /// The end of year 9999, the last instant RFC 3339 can write: ingest takes no later
    /// timestamp, and no writer goes past it.
    public static let latest = 253_402_300_799.0

    /// How a writer turns the fraction of a second into milliseconds.
    public enum Milliseconds: Sendable {
        /// To the nearest millisecond, as Foundation's formatter did (Sentry payloads).
        case rounded
        /// Cut, as the file log writes its lines, so a bound compares with them as text.
        case truncated
    }

    /// RFC 3339 in UTC with milliseconds, as Sentry's session payloads carry it:
    /// `2026-12-01T09:30:00.123Z`. Written by hand from gmtime_r: the first
    /// ISO8601DateFormatter of a process loads ICU's calendar data (over a millisecond), and the
    /// SDK's start needs this string on the app's thread. Years outside 0…9999 are clamped.
    public static func rfc3339(_ seconds: Double, milliseconds: Milliseconds = .rounded) -> String {
        let clamped = seconds.isFinite ? min(max(seconds, -62_167_219_200), latest + 0.999) : 0
        let whole: Int64, millis: Int
        switch milliseconds {
        case .rounded:
            let ms = Int64((clamped * 1000).rounded())  // to the nearest millisecond, as the formatter does
            whole = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
            millis = Int(ms - whole * 1000)
        case .truncated:
            let down = clamped.rounded(.down)
            whole = Int64(down)
            millis = Int((clamped - down) * 1000)
        }
        var out = [UInt8]()
        out.reserveCapacity(24)
        write(wholeSeconds: whole, milliseconds: millis) { out.append($0) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes `YYYY-MM-DDTHH:MM:SS.mmmZ` byte by byte: no formatter and no allocation, so the
    /// SDK's file log writes its lines' timestamps with it too.
    @inlinable
    public static func write(wholeSeconds: Int64, milliseconds: Int, _ byte: (UInt8) -> Void) {
        var t = time_t(wholeSeconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        func digits(_ v: Int, _ n: Int) {
            var d = 1
            for _ in 1..<n { d *= 10 }
            while d > 0 { byte(UInt8(48 + (v / d) % 10)); d /= 10 }
        }
        digits(Int(tm.tm_year) + 1900, 4); byte(0x2D); digits(Int(tm.tm_mon) + 1, 2); byte(0x2D)
        digits(Int(tm.tm_mday), 2); byte(0x54); digits(Int(tm.tm_hour), 2); byte(0x3A)
        digits(Int(tm.tm_min), 2); byte(0x3A); digits(Int(tm.tm_sec), 2); byte(0x2E)
        digits(milliseconds, 3); byte(0x5A)
    }

    /// A time with every digit of its fraction (the Swift backtracer writes microseconds):
    /// `2026-12-01T06:34:30.554110Z`. Unlike `seconds(rfc3339:)`, a zone is required (`Z` or
    /// `±hh:mm`), as ISO8601DateFormatter's default options had it.
    public static func preciseSeconds(rfc3339 s: String) -> Double? {
        var whole = s, fraction = 0.0
        if let dot = s.firstIndex(of: "."), let z = s.lastIndex(of: "Z"), dot < z {
            // Digits only, at most nine (nanoseconds): `.5e300` or `.5+01:00` is not a fraction.
            let digits = s[s.index(after: dot)..<z]
            guard (1...9).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            fraction = Double("0." + digits) ?? 0
            whole = String(s[..<dot]) + "Z"
        }
        guard whole.utf8.count > 19, let (text, _) = canonical(whole), let seconds = seconds(canonical: Array(text.utf8)) else { return nil }
        return seconds + fraction
    }
}
