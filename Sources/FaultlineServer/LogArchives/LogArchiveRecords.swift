// What the server keeps about log archives, the filter that lists them, and the caps that apply.
import Foundation

/// Caps and retention of log archives (docs/SERVER.md, "Log archives").
public struct LogArchiveLimits: Sendable {
    /// One archive as uploaded (gzip). Larger bodies get 413 before they are read.
    public var maxCompressedBytes = 16 * 1024 * 1024
    /// One archive inflated; inflation stops here (a gzip bomb gets 413, nothing is stored).
    public var maxUncompressedBytes = 256 * 1024 * 1024
    /// The client's file name (metadata only) in bytes after percent-decoding.
    public var maxNameBytes = 255
    /// Archives older than this are deleted (seconds; 0 keeps them forever).
    public var maxAgeSeconds: Double = 30 * 86_400
    /// All archives together; past it the oldest are deleted (0: no cap).
    public var maxTotalBytes: Int64 = 10 * 1024 * 1024 * 1024
    public init() {}
}

/// One stored archive. `storageName` is the server's own relative path; `clientName` is what
/// the SDK said the file was called and is never used to build a path.
public struct LogArchiveRecord: Sendable, Equatable {
    public var id: Int64
    public var projectID: Int64
    public var installID: String
    public var appID: String?
    public var release: String?
    public var clientName: String
    public var sha256: String
    public var compressedBytes: Int64
    public var uncompressedBytes: Int64
    public var lines: Int64
    public var received: Double
    public var storageName: String
}

/// Which archives a list, a retention pass or `logs top` looks at.
public struct LogArchiveFilter: Sendable {
    public var projectID: Int64?
    public var installID: String?
    public var release: String?
    /// Received at or after (seconds since 1970).
    public var since: Double?
    public var limit = 1000
    public var offset = 0
    public init(projectID: Int64? = nil, installID: String? = nil, release: String? = nil, since: Double? = nil) {
        self.projectID = projectID; self.installID = installID; self.release = release; self.since = since
    }
}
