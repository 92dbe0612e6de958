// What may name a release, as Sentry's Relay decides it: at most 200 bytes, no slash and no
// control character (a newline in a release would become a line of an alert's mail), not `.` or
// `..`, and not `latest` (Sentry's word for the newest release). The releases API refuses another
// name; ingest keeps the event and drops such a release from what it records.
public enum ReleaseName {
    /// Sentry's word for the newest release (`statusDetails.inRelease`).
    public static let latest = "latest"

    /// Read as bytes where the name is ASCII (every event carries one, so Foundation's `contains`
    /// and a scalar's properties per character showed in ingest's profile).
    public static func isValid(_ v: String) -> Bool {
        guard !v.isEmpty, v.utf8.count <= 200, v != ".", v != "..", v != latest else { return false }
        var ascii = true
        for b in v.utf8 {
            if b == UInt8(ascii: "/") || b < 0x20 || b == 0x7F { return false }
            if b >= 0x80 { ascii = false }
        }
        return ascii || !v.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
