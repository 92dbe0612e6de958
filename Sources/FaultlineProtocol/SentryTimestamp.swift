// Sentry timestamps: seconds since the epoch as a number, or an RFC 3339 string. Read and written
// here once, through Foundation's ISO8601DateFormatter.
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
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d.timeIntervalSince1970 }
        f.formatOptions = [.withInternetDateTime]
        if let d = f.date(from: s) { return d.timeIntervalSince1970 }
        // No zone designator (the time part is 8 characters, or more with a fraction): UTC.
        if s.count >= 19, !s.hasSuffix("Z"), !s.dropFirst(19).contains(where: { $0 == "+" || $0 == "-" }) {
            return seconds(rfc3339: s + "Z")
        }
        return nil
    }

    /// RFC 3339 in UTC with milliseconds, as Sentry's session payloads carry it.
    public static func rfc3339(_ seconds: Double) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: seconds))
    }
}
