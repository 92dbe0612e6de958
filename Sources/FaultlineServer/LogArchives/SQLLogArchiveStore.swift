// `LogArchiveStore` written once over `SQLDatabase`, for both stores (columns and row mapping in
// LogArchiveRows), and the two conformances, which only forward here. The archive files
// themselves stay in the data directory of the node that received them (LogArchiveFiles).
import Foundation

enum SQLLogArchiveStore {
    static func record(_ db: some SQLDatabase, _ a: LogArchiveRecord) throws -> Int64? {
        try db.writing { c in
            try c.rows(
                """
                INSERT INTO log_archives(\(LogArchiveRows.insertColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(project_id, sha256) DO NOTHING RETURNING id
                """, LogArchiveRows.values(a)
            ) { $0.int(0) }.first
        }
    }

    static func archive(_ db: some SQLDatabase, projectID: Int64, sha256: String) throws -> LogArchiveRecord? {
        try db.reading { c in
            try c.first(
                "SELECT \(LogArchiveRows.columns) FROM log_archives WHERE project_id = ? AND sha256 = ?", .int(projectID), .text(sha256),
                map: LogArchiveRows.archive)
        }
    }

    static func archive(_ db: some SQLDatabase, id: Int64) throws -> LogArchiveRecord? {
        try db.reading { c in try c.first("SELECT \(LogArchiveRows.columns) FROM log_archives WHERE id = ?", .int(id), map: LogArchiveRows.archive) }
    }

    static func archives(_ db: some SQLDatabase, _ f: LogArchiveFilter) throws -> [LogArchiveRecord] {
        try db.reading { c in
            try c.rows(
                """
                SELECT \(LogArchiveRows.columns) FROM log_archives
                WHERE (CAST(?1 AS BIGINT) IS NULL OR project_id = ?1) AND (CAST(?2 AS TEXT) IS NULL OR install_id = ?2)
                  AND (CAST(?3 AS TEXT) IS NULL OR release = ?3) AND (CAST(?4 AS DOUBLE PRECISION) IS NULL OR received >= ?4)
                ORDER BY received DESC, id DESC LIMIT ?5 OFFSET ?6
                """, LogArchiveRows.filterValues(f), LogArchiveRows.archive)
        }
    }

    static func oldest(_ db: some SQLDatabase, limit: Int) throws -> [LogArchiveRecord] {
        try db.reading { c in
            try c.rows("SELECT \(LogArchiveRows.columns) FROM log_archives ORDER BY received, id LIMIT ?", .int(Int64(limit)), map: LogArchiveRows.archive)
        }
    }

    static func totalBytes(_ db: some SQLDatabase) throws -> Int64 {
        try db.reading { c in try c.first("SELECT COALESCE(SUM(compressed_bytes), 0) FROM log_archives") { $0.int(0) } ?? 0 }
    }

    static func delete(_ db: some SQLDatabase, ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try db.writing { c in
            for id in ids { try c.execute("DELETE FROM log_archives WHERE id = ?", .int(id)) }
        }
    }

    static func storageNames(_ db: some SQLDatabase) throws -> Set<String> {
        try db.reading { c in Set(try c.rows("SELECT storage_name FROM log_archives") { $0.text(0) ?? "" }) }
    }

    static func setRule(_ db: some SQLDatabase, _ r: LogUploadRule) throws {
        try db.writing { c in
            try c.execute(
                """
                INSERT INTO log_upload_rules(project_id, scope, value, enabled, changed) VALUES(?, ?, ?, ?, ?)
                ON CONFLICT(project_id, scope, value) DO UPDATE SET enabled = excluded.enabled, changed = excluded.changed
                """, .int(r.projectID), .text(r.scope.rawValue), .text(r.value), .int(r.enabled ? 1 : 0), .double(r.changed))
        }
    }

    static func removeRule(_ db: some SQLDatabase, projectID: Int64, scope: LogUploadRule.Scope, value: String) throws {
        try db.writing { c in
            try c.execute("DELETE FROM log_upload_rules WHERE project_id = ? AND scope = ? AND value = ?", .int(projectID), .text(scope.rawValue), .text(value))
        }
    }

    static func rules(_ db: some SQLDatabase, projectID: Int64?) throws -> [LogUploadRule] {
        try db.reading { c in
            try c.rows(
                "SELECT project_id, scope, value, enabled, changed FROM log_upload_rules WHERE CAST(?1 AS BIGINT) IS NULL OR project_id = ?1 ORDER BY project_id, scope, value",
                projectID.map { .int($0) } ?? .null, map: LogArchiveRows.rule
            ).compactMap { $0 }
        }
    }
}

/// `LogArchiveStore` for both stores, but for preparing the tables (below).
extension SQLBackedStore {
    private var db: any SQLDatabase { sqlBacking.database }
    public func recordLogArchive(_ a: LogArchiveRecord) throws -> Int64? { try SQLLogArchiveStore.record(db, a) }
    public func logArchive(projectID: Int64, sha256: String) throws -> LogArchiveRecord? {
        try SQLLogArchiveStore.archive(db, projectID: projectID, sha256: sha256)
    }
    public func logArchive(id: Int64) throws -> LogArchiveRecord? { try SQLLogArchiveStore.archive(db, id: id) }
    public func logArchives(_ f: LogArchiveFilter) throws -> [LogArchiveRecord] { try SQLLogArchiveStore.archives(db, f) }
    public func oldestLogArchives(limit: Int) throws -> [LogArchiveRecord] { try SQLLogArchiveStore.oldest(db, limit: limit) }
    public func logArchiveTotalBytes() throws -> Int64 { try SQLLogArchiveStore.totalBytes(db) }
    public func deleteLogArchives(ids: [Int64]) throws { try SQLLogArchiveStore.delete(db, ids: ids) }
    public func allLogArchiveStorageNames() throws -> Set<String> { try SQLLogArchiveStore.storageNames(db) }
    public func setLogUploadRule(_ r: LogUploadRule) throws { try SQLLogArchiveStore.setRule(db, r) }
    public func removeLogUploadRule(projectID: Int64, scope: LogUploadRule.Scope, value: String) throws {
        try SQLLogArchiveStore.removeRule(db, projectID: projectID, scope: scope, value: value)
    }
    public func logUploadRules(projectID: Int64?) throws -> [LogUploadRule] { try SQLLogArchiveStore.rules(db, projectID: projectID) }
}

extension SQLiteStore: LogArchiveStore {
    public func prepareLogArchiveTables() throws {
        try writer.sync { c in try c.exec(SQLiteLogArchiveSchema.statements) }
    }
}

extension PostgresStore: LogArchiveStore {
    /// Nothing to do: the tables come with the schema (migration 5), applied when the store opened.
    public func prepareLogArchiveTables() throws {}
}
