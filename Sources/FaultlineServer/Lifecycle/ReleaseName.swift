// What may name a release, as Sentry's Relay decides it: at most 200 bytes, no slash and no
// control character (a newline in a release would become a line of an alert's mail), not `.` or
// `..`, and not `latest` (Sentry's word for the newest release). The releases API refuses another
// name; ingest keeps the event and drops such a release from what it records.
public enum ReleaseName {
    /// Sentry's word for the newest release (`statusDetails.inRelease`).
    public static let latest = "latest"

    public static func isValid(_ v: String) -> Bool {
        !v.isEmpty && v.utf8.count <= 200 && !v.contains("/") && v != "." && v != ".." && v != latest
            && !v.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
