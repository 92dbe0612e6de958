// Where rolled log archives are recorded: the store seam of the log-archive receiver.
import Foundation

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
