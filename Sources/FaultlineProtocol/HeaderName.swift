// The HTTP header names the SDK sends and the server reads (or the other way round), spelled once.

/// Header names as they are sent. HTTP compares names case-insensitively; both sides' readers
/// lowercase before looking a name up, so these spellings are the only ones in the code.
public enum HeaderName {
    /// SDK → server, on envelopes and log archives: the install (a random id kept on disk).
    public static let installID = "X-Faultline-Install-Id"
    /// Server → an alert's webhook: the delivery's id, the same on every attempt of it (delivery
    /// is at least once), for the receiver to recognise a repeat.
    public static let alertDelivery = "X-Faultline-Delivery"
    /// SDK → server: `Options.appID`, checked against a key's allowed apps.
    public static let appID = "X-Faultline-App-Id"
    /// SDK → server, on log archives: the release, percent-encoded UTF-8.
    public static let release = "X-Faultline-Release"
    /// SDK → server, on log archives: the archive's file name, percent-encoded UTF-8.
    public static let archiveName = "X-Faultline-Archive-Name"
    /// SDK → server, on log archives: the body's SHA-256 in lowercase hex.
    public static let archiveSHA256 = "X-Faultline-Archive-Sha256"
    /// Server → SDK: `on` or `off`, whether log archives may be uploaded (`LogUploadSwitch`).
    public static let logUpload = "X-Faultline-Log-Upload"
    /// SDK → server: Sentry's `Sentry sentry_version=7, sentry_client=…, sentry_key=…`.
    public static let sentryAuth = "X-Sentry-Auth"
    /// Server → SDK: seconds to wait before sending again.
    public static let retryAfter = "Retry-After"
    /// Server → SDK: Sentry's per-category limits (`RateLimitHeader`).
    public static let sentryRateLimits = "X-Sentry-Rate-Limits"
}
