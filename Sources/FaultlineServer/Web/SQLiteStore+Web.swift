// `WebStore` over SQLite: the pages' queries and the `web_*` tables (schema migration 3).
import Foundation

enum SQLiteWebSchema {
    /// Part of schema migration 3 (SQLiteSchema). IF NOT EXISTS: data directories that made these
    /// tables on first use before the migration keep them.
    static let statements = """
    CREATE TABLE IF NOT EXISTS web_issue_status(
        issue_id INTEGER PRIMARY KEY, status TEXT NOT NULL, changed REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS web_upload_tokens(
        build_id TEXT PRIMARY KEY, token_name TEXT NOT NULL, uploaded REAL NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS web_users(
        name TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL, created REAL NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS web_stack_envs(
        environment TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(environment, stack_key)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS web_state(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    -- Per-issue sparkline and installs-affected read only this index (covering), never the event blobs.
    CREATE INDEX IF NOT EXISTS web_occurrences_issue_time ON occurrences(issue_id, timestamp, install_id);
    CREATE INDEX IF NOT EXISTS web_issues_project_seen ON issues(project_id, last_seen, id);
    CREATE INDEX IF NOT EXISTS web_items_type_id ON items(project_id, type, id);
    """
}

extension SQLiteStore: WebStore {
    func webIssueHeads(projectID: Int64, _ q: IssueQuery) throws -> [(id: Int64, status: String, sortValue: Double)] {
        let (sql, values) = WebSQL.issueHeads(projectID: projectID, q, .sqlite)
        return try read { c in
            var out: [(Int64, String, Double)] = []
            try c.query(sql, values) { out.append(($0.int(0), $0.text(1) ?? "unresolved", $0.double(2))) }
            return out
        }
    }

    func webOccurrencesPerDay(issueID: Int64, since: Double) throws -> [(day: Int64, count: Int64)] {
        try read { c in
            var out: [(Int64, Int64)] = []
            try c.query("SELECT CAST(timestamp / 86400 AS INTEGER), count(*) FROM occurrences WHERE issue_id = ? AND timestamp >= ? GROUP BY 1",
                        .int(issueID), .double(since)) { out.append(($0.int(0), $0.int(1))) }
            return out
        }
    }

    func webInstalls(issueID: Int64) throws -> Int64 {
        try read { c in
            var n: Int64 = 0
            try c.query("SELECT count(DISTINCT install_id) FROM occurrences WHERE issue_id = ?", .int(issueID)) { n = $0.int(0) }
            return n
        }
    }

    func webReleases(projectID: Int64) throws -> [String] {
        try read { c in
            var out: [String] = []
            try c.query("SELECT DISTINCT r.release FROM issue_releases r JOIN issues i ON i.id = r.issue_id WHERE i.project_id = ? ORDER BY 1 DESC LIMIT 200",
                        .int(projectID)) { out.append($0.text(0) ?? "") }
            return out
        }
    }

    func webEnvironments() throws -> [String] {
        try read { c in
            var out: [String] = []
            try c.query("SELECT DISTINCT environment FROM web_stack_envs ORDER BY 1 LIMIT 100") { out.append($0.text(0) ?? "") }
            return out
        }
    }

    func webStatus(issueID: Int64) throws -> String? {
        try read { c in
            var s: String?
            try c.query("SELECT status FROM web_issue_status WHERE issue_id = ?", .int(issueID)) { s = $0.text(0) }
            return s
        }
    }

    func webFirstRelease(issueID: Int64) throws -> String? {
        try read { c in
            var r: String?
            try c.query("SELECT release FROM occurrences WHERE issue_id = ? AND release IS NOT NULL ORDER BY timestamp LIMIT 1", .int(issueID)) { r = $0.text(0) }
            return r
        }
    }

    func webOccurrences(issueID: Int64, before: Int64, limit: Int) throws -> [OccurrenceRow] {
        try read { c in
            var out: [OccurrenceRow] = []
            try c.query("SELECT \(WebSQL.occurrenceColumns) FROM occurrences WHERE issue_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
                        .int(issueID), .int(before), .int(Int64(limit))) { out.append(WebSQL.occurrence($0)) }
            return out
        }
    }

    func webSetStatus(issueID: Int64, _ status: String, changed: Double) throws {
        try writer.sync { c in
            try c.run("INSERT INTO web_issue_status(issue_id, status, changed) VALUES(?, ?, ?) ON CONFLICT(issue_id) DO UPDATE SET status = excluded.status, changed = excluded.changed",
                      .int(issueID), .text(status), .double(changed))
        }
    }

    func webRecordUploader(buildID: String, tokenName: String, uploaded: Double) throws {
        try writer.sync { c in
            try c.run("INSERT INTO web_upload_tokens(build_id, token_name, uploaded) VALUES(?, ?, ?) ON CONFLICT DO NOTHING",
                      .text(buildID), .text(tokenName), .double(uploaded))
        }
    }

    func webUploaders() throws -> [String: WebUploadInfo] {
        try read { c in
            var out: [String: WebUploadInfo] = [:]
            try c.query("SELECT build_id, token_name, uploaded FROM web_upload_tokens") { out[$0.text(0) ?? ""] = WebUploadInfo(tokenName: $0.text(1) ?? "", uploaded: $0.double(2)) }
            return out
        }
    }

    func webTokenName(hash: String) throws -> String? {
        try read { c in
            var n: String?
            try c.query("SELECT name FROM server_tokens WHERE hash = ?", .text(hash)) { n = $0.text(0) }
            return n
        }
    }

    func webIssues(referencing buildID: String, limit: Int) throws -> [(id: Int64, title: String, symbolicated: Bool)] {
        try read { c in
            var out: [(Int64, String, Bool)] = []
            try c.query("""
                SELECT i.id, i.title, i.symbolicated FROM issues i WHERE i.merged_into IS NULL AND i.id IN (
                  SELECT o.issue_id FROM stack_modules m JOIN occurrences o ON o.stack_key = m.stack_key WHERE m.build_id = ?)
                ORDER BY i.last_seen DESC LIMIT ?
                """, .text(buildID), .int(Int64(limit))) { out.append(($0.int(0), $0.text(1) ?? "", $0.int(2) != 0)) }
            return out
        }
    }

    func webItems(projectID: Int64, type: String, before: Int64, limit: Int) throws -> [(id: Int64, received: Double, payload: Data)] {
        try read { c in
            var out: [(Int64, Double, Data)] = []
            try c.query("SELECT id, received, payload FROM items WHERE project_id = ? AND type = ? AND id < ? ORDER BY id DESC LIMIT ?",
                        .int(projectID), .text(type), .int(before), .int(Int64(limit))) { out.append(($0.int(0), $0.double(1), $0.blob(2))) }
            return out
        }
    }

    func webUser(_ name: String) throws -> WebUser? {
        try read { c in
            var u: WebUser?
            try c.query("SELECT name, salt, hash FROM web_users WHERE name = ?", .text(name)) { u = WebUser(name: $0.text(0) ?? "", salt: $0.blob(1), hash: $0.blob(2)) }
            return u
        }
    }

    func webSetUser(_ u: WebUser, created: Double) throws {
        try writer.sync { c in
            try c.run("INSERT OR REPLACE INTO web_users(name, salt, hash, created) VALUES(?, ?, ?, ?)",
                      .text(u.name), .blob(u.salt), .blob(u.hash), .double(created))
        }
    }

    func webUsers() throws -> [String] {
        try read { c in
            var out: [String] = []
            try c.query("SELECT name FROM web_users ORDER BY name") { out.append($0.text(0) ?? "") }
            return out
        }
    }

    func webEnvironmentIndexPosition() throws -> Int64 {
        try read { c in
            var v: Int64 = 0
            try c.query("SELECT value FROM web_state WHERE key = 'env_indexed'") { v = $0.int(0) }
            return v
        }
    }

    func webGroupedOccurrences(after id: Int64, limit: Int) throws -> [(id: Int64, stackKey: String?, event: Data)] {
        try read { c in
            var out: [(Int64, String?, Data)] = []
            try c.query("SELECT id, stack_key, event FROM occurrences WHERE id > ? AND processed = 1 ORDER BY id LIMIT ?", .int(id), .int(Int64(limit))) {
                out.append(($0.int(0), $0.text(1), $0.blob(2)))
            }
            return out
        }
    }

    func webIndexEnvironments(_ pairs: [(environment: String, stackKey: String)], position: Int64) throws {
        try writer.sync { c in
            for p in pairs {
                try c.run("INSERT INTO web_stack_envs(environment, stack_key) VALUES(?, ?) ON CONFLICT DO NOTHING", .text(p.environment), .text(p.stackKey))
            }
            try c.run("INSERT INTO web_state(key, value) VALUES('env_indexed', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", .int(position))
        }
    }
}
