// What the server keeps about log archives and the upload switch, and the caps that apply.
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

/// One rule of the remote switch: log upload off (or on) for a whole project, one release of
/// it, or one install. The most specific rule wins: install, then release, then project;
/// without any rule uploads are on.
public struct LogUploadRule: Sendable, Equatable {
    public enum Scope: String, Sendable, CaseIterable { case project, release, install }
    public var projectID: Int64
    public var scope: Scope
    /// The release or install id ("" for the project scope).
    public var value: String
    public var enabled: Bool
    public var changed: Double

    public init(projectID: Int64, scope: Scope, value: String, enabled: Bool, changed: Double = Date().timeIntervalSince1970) {
        self.projectID = projectID; self.scope = scope; self.value = value; self.enabled = enabled; self.changed = changed
    }

    /// Whether uploads are on for this release and install under `rules` (of one project).
    public static func isEnabled(_ rules: [LogUploadRule], release: String?, installID: String?) -> Bool {
        if let i = installID, let r = rules.first(where: { $0.scope == .install && $0.value == i }) { return r.enabled }
        if let v = release, let r = rules.first(where: { $0.scope == .release && $0.value == v }) { return r.enabled }
        if let r = rules.first(where: { $0.scope == .project }) { return r.enabled }
        return true
    }
}

/// The storage seam for log archives. Kept beside `Store` (not in it) so a store can do without
/// it; SQLiteStore and PostgresStore both implement it (LogArchives/SQLLogArchiveStore.swift).
public protocol LogArchiveStore: AnyObject, Sendable {
    func prepareLogArchiveTables() throws
    /// Inserts; nil when an archive with this checksum already exists in the project.
    func recordLogArchive(_ r: LogArchiveRecord) throws -> Int64?
    func logArchive(projectID: Int64, sha256: String) throws -> LogArchiveRecord?
    func logArchive(id: Int64) throws -> LogArchiveRecord?
    /// Newest first.
    func logArchives(_ filter: LogArchiveFilter) throws -> [LogArchiveRecord]
    /// Oldest first, for retention.
    func oldestLogArchives(limit: Int) throws -> [LogArchiveRecord]
    func logArchiveTotalBytes() throws -> Int64
    func deleteLogArchives(ids: [Int64]) throws
    func allLogArchiveStorageNames() throws -> Set<String>
    func setLogUploadRule(_ rule: LogUploadRule) throws
    func removeLogUploadRule(projectID: Int64, scope: LogUploadRule.Scope, value: String) throws
    func logUploadRules(projectID: Int64?) throws -> [LogUploadRule]
}
