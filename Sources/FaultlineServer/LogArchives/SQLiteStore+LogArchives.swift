// Log-archive metadata and upload-switch rules in the SQLite store. The tables come with schema
// migration 3 (IF NOT EXISTS: data directories that made them on first use before keep theirs).
import Foundation

enum SQLiteLogArchiveSchema {
    /// Part of schema migration 3 (SQLiteSchema); also run by `prepareLogArchiveTables`.
    static let statements = """
    CREATE TABLE IF NOT EXISTS log_archives(
        id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, install_id TEXT NOT NULL, app_id TEXT, release TEXT,
        client_name TEXT NOT NULL, sha256 TEXT NOT NULL, compressed_bytes INTEGER NOT NULL,
        uncompressed_bytes INTEGER NOT NULL, lines INTEGER NOT NULL, received REAL NOT NULL, storage_name TEXT NOT NULL,
        UNIQUE(project_id, sha256));
    CREATE INDEX IF NOT EXISTS log_archives_received ON log_archives(received, id);
    CREATE INDEX IF NOT EXISTS log_archives_project ON log_archives(project_id, received);
    CREATE TABLE IF NOT EXISTS log_upload_rules(
        project_id INTEGER NOT NULL, scope TEXT NOT NULL, value TEXT NOT NULL, enabled INTEGER NOT NULL,
        changed REAL NOT NULL, PRIMARY KEY(project_id, scope, value)) WITHOUT ROWID;
    """
}

extension SQLiteStore: LogArchiveStore {
    public func prepareLogArchiveTables() throws {
        try writer.sync { c in try c.exec(SQLiteLogArchiveSchema.statements) }
    }

    public func recordLogArchive(_ a: LogArchiveRecord) throws -> Int64? {
        try writer.sync { c -> Int64? in
            let n = try c.run("INSERT OR IGNORE INTO log_archives(\(LogArchiveRows.insertColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      LogArchiveRows.values(a))
            return n == 1 ? c.lastInsertRowID : nil
        }
    }

    public func logArchive(projectID: Int64, sha256: String) throws -> LogArchiveRecord? {
        try read { c in
            var out: LogArchiveRecord?
            try c.query("SELECT \(LogArchiveRows.columns) FROM log_archives WHERE project_id = ? AND sha256 = ?", .int(projectID), .text(sha256)) { out = LogArchiveRows.archive($0) }
            return out
        }
    }

    public func logArchive(id: Int64) throws -> LogArchiveRecord? {
        try read { c in
            var out: LogArchiveRecord?
            try c.query("SELECT \(LogArchiveRows.columns) FROM log_archives WHERE id = ?", .int(id)) { out = LogArchiveRows.archive($0) }
            return out
        }
    }

    public func logArchives(_ f: LogArchiveFilter) throws -> [LogArchiveRecord] {
        try read { c in
            var out: [LogArchiveRecord] = []
            try c.query("""
        SELECT \(LogArchiveRows.columns) FROM log_archives
        WHERE (?1 IS NULL OR project_id = ?1) AND (?2 IS NULL OR install_id = ?2) AND (?3 IS NULL OR release = ?3)
          AND (?4 IS NULL OR received >= ?4)
        ORDER BY received DESC, id DESC LIMIT ?5 OFFSET ?6
        """, LogArchiveRows.filterValues(f)) { out.append(LogArchiveRows.archive($0)) }
            return out
        }
    }

    public func oldestLogArchives(limit: Int) throws -> [LogArchiveRecord] {
        try read { c in
            var out: [LogArchiveRecord] = []
            try c.query("SELECT \(LogArchiveRows.columns) FROM log_archives ORDER BY received, id LIMIT ?", .int(Int64(limit))) { out.append(LogArchiveRows.archive($0)) }
            return out
        }
    }

    public func logArchiveTotalBytes() throws -> Int64 {
        try read { c in
            var n: Int64 = 0
            try c.query("SELECT COALESCE(SUM(compressed_bytes), 0) FROM log_archives") { n = $0.int(0) }
            return n
        }
    }

    public func deleteLogArchives(ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try writer.sync { c in
            for id in ids { try c.run("DELETE FROM log_archives WHERE id = ?", .int(id)) }
        }
    }

    public func allLogArchiveStorageNames() throws -> Set<String> {
        try read { c in
            var out = Set<String>()
            try c.query("SELECT storage_name FROM log_archives") { out.insert($0.text(0) ?? "") }
            return out
        }
    }

    public func setLogUploadRule(_ r: LogUploadRule) throws {
        try writer.sync { c in
            try c.run("INSERT OR REPLACE INTO log_upload_rules(project_id, scope, value, enabled, changed) VALUES(?, ?, ?, ?, ?)",
              .int(r.projectID), .text(r.scope.rawValue), .text(r.value), .int(r.enabled ? 1 : 0), .double(r.changed))
        }
    }

    public func removeLogUploadRule(projectID: Int64, scope: LogUploadRule.Scope, value: String) throws {
        try writer.sync { c in
            try c.run("DELETE FROM log_upload_rules WHERE project_id = ? AND scope = ? AND value = ?", .int(projectID), .text(scope.rawValue), .text(value))
        }
    }

    public func logUploadRules(projectID: Int64?) throws -> [LogUploadRule] {
        try read { c in
            var out: [LogUploadRule] = []
            try c.query("SELECT project_id, scope, value, enabled, changed FROM log_upload_rules WHERE ?1 IS NULL OR project_id = ?1 ORDER BY project_id, scope, value",
                projectID.map { .int($0) } ?? .null) { r in
        if let rule = LogArchiveRows.rule(r) { out.append(rule) }
            }
            return out
        }
    }
}
