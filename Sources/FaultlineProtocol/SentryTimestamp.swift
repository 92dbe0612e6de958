// Sentry timestamps: seconds since the epoch as a number, or an RFC 3339 string. Read here once,
// through Foundation's ISO8601DateFormatter, and written by hand.
import Foundation

public enum SentryTimestamp {
    /// Seconds since the epoch from a number or an RFC 3339 string (`YYYY-MM-DDTHH:MM:SS[.frac]`
    /// with `Z` or `±hh:mm`; a string without a zone is read as UTC). nil when neither.
    public static func seconds(_ v: JSONValue?) -> Double? {
        guard let v else { return nil }
        if let d = v.doubleValue { return d }
        return v.stringValue.flatMap(seconds(rfc3339:))
    }

    public static func seconds(rfc3339 s: String) -> Double? {
        // Checked by hand first: the formatter (ICU) must only ever see a well-formed string — a
        // fraction of 100 digits made it divide by zero (SIGFPE) on a client's timestamp, found by
        // the envelope fuzzer.
        guard let (text, hasFraction) = canonical(s) else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = hasFraction ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return f.date(from: text)?.timeIntervalSince1970
    }

    /// `YYYY-MM-DDTHH:MM:SS[.f…]` then `Z`, `±hh:mm` or nothing (UTC), ASCII digits only, at most
    /// 9 fraction digits; returned with the fraction cut to milliseconds and an explicit zone.
    static func canonical(_ s: String) -> (String, Bool)? {
        let b = Array(s.utf8)
        guard b.count >= 19, b.count <= 40 else { return nil }
        func digits(_ r: Range<Int>) -> Bool { r.allSatisfy { b[$0] >= 0x30 && b[$0] <= 0x39 } }
        guard digits(0..<4), b[4] == 0x2D, digits(5..<7), b[7] == 0x2D, digits(8..<10), b[10] == 0x54 || b[10] == 0x74,
              digits(11..<13), b[13] == 0x3A, digits(14..<16), b[16] == 0x3A, digits(17..<19) else { return nil }
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

    /// RFC 3339 in UTC with milliseconds (rounded), as Sentry's session payloads carry it:
    /// `2026-12-01T09:30:00.123Z`. Written by hand from gmtime_r: the first
    /// ISO8601DateFormatter of a process loads ICU's calendar data (over a millisecond), and the
    /// SDK's start needs this string on the app's thread. Years outside 0…9999 are clamped.
    public static func rfc3339(_ seconds: Double) -> String {
        let clamped = seconds.isFinite ? min(max(seconds, -62_167_219_200), 253_402_300_799.999) : 0
        let ms = Int64((clamped * 1000).rounded())  // to the nearest millisecond, as the formatter does
        let whole = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        var t = time_t(whole)
        var tm = tm()
        gmtime_r(&t, &tm)
        let millis = Int(ms - whole * 1000)
        var out = [UInt8]()
        out.reserveCapacity(24)
        func digits(_ v: Int, _ n: Int) {
            var d = 1
            for _ in 1..<n { d *= 10 }
            while d > 0 { out.append(UInt8(48 + (v / d) % 10)); d /= 10 }
        }
        digits(Int(tm.tm_year) + 1900, 4); out.append(0x2D); digits(Int(tm.tm_mon) + 1, 2); out.append(0x2D)
        digits(Int(tm.tm_mday), 2); out.append(0x54); digits(Int(tm.tm_hour), 2); out.append(0x3A)
        digits(Int(tm.tm_min), 2); out.append(0x3A); digits(Int(tm.tm_sec), 2); out.append(0x2E)
        digits(millis, 3); out.append(0x5A)
        return String(decoding: out, as: UTF8.self)
    }
}
