// Every cap ingest applies, in one place (defaults follow Sentry's where they are sane for one box).
public struct IngestLimits: Sendable {
    /// Request body as received (compressed or not).
    public var maxRequestBytes = 20 * 1024 * 1024
    /// Body after decompression; inflation stops at this size.
    public var maxDecompressedBytes = 50 * 1024 * 1024
    /// One event item's JSON.
    public var maxEventBytes = 1024 * 1024
    /// Items per envelope.
    public var maxItems = 100
    /// Events one install may send per window; 0 disables the cap.
    public var eventsPerInstall = 1_000
    public var installWindowSeconds = 3_600
    public init() {}
}
