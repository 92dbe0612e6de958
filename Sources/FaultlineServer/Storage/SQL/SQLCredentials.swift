// Projects, public keys and server tokens: the `Store` lookups and the `ProjectAdministrationStore`
// feature store, the same statements on both stores, written once over `SQLDatabase` and given to both by `SQLBackedStore`. Keys and
// token hashes found once are cached per store (ingest asks for them on every request; they are
// never deleted, so a cached one is never stale).
import Foundation
import FaultlineProtocol
import FaultlineHashing
import Synchronization

/// The per-store cache of known public keys and server-token hashes.
final class CredentialCache: Sendable {
    private struct Entry<Value> { let value: Value; let until: Double }
    private let keys = Mutex<[String: Entry<PublicKeyRecord>]>([:])
    private let tokenHashes = Mutex<[String: Double]>([:])

    init() {}

    /// A key looked up within `CredentialLifetime.seconds`: a key revoked by another process (the
    /// CLI, another node) is looked up again, and refused, within that time.
    func key(_ k: String, now: Double = Date().timeIntervalSince1970) -> PublicKeyRecord? {
        keys.withLock { cached in
            guard let e = cached[k] else { return nil }
            if e.until > now { return e.value }
            cached[k] = nil
            return nil
        }
    }
    func remember(_ r: PublicKeyRecord, now: Double = Date().timeIntervalSince1970) {
        keys.withLock { $0[r.key.value] = Entry(value: r, until: now + CredentialLifetime.seconds) }
    }
    func forgetKey(_ k: String) { keys.withLock { $0[k] = nil } }
    func knowsToken(_ hash: String, now: Double = Date().timeIntervalSince1970) -> Bool {
        tokenHashes.withLock { cached in
            guard let until = cached[hash] else { return false }
            if until > now { return true }
            cached[hash] = nil
            return false
        }
    }
    func rememberToken(_ hash: String, now: Double = Date().timeIntervalSince1970) {
        tokenHashes.withLock { $0[hash] = now + CredentialLifetime.seconds }
    }
    func forgetTokens() { tokenHashes.withLock { $0.removeAll() } }
}

/// How long a process trusts a key or token it looked up before it looks again: what a
/// revocation in another process (the CLI, another node) takes to be refused here.
public enum CredentialLifetime {
    public static let seconds = 30.0
}

enum SQLCredentials {
    static let keyColumns = "key, project_id, app_ids"

    static func key(_ r: any SQLRow) -> PublicKeyRecord {
        let apps = (r.text(2) ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return PublicKeyRecord(key: PublicKey(r.text(0) ?? ""), projectID: r.int(1), allowedAppIDs: apps)
    }
}

extension SQLBackedStore {
    private var db: any SQLDatabase { sqlBacking.database }
    private var cache: CredentialCache { sqlBacking.credentials }

    public func createProject(slug: String, name: String) throws -> ProjectRecord {
        let now = Date().timeIntervalSince1970
        return try db.writing { c in
            let id =
                try c.rows(
                    "INSERT INTO projects(slug, name, created) VALUES(?, ?, ?) RETURNING id",
                    [.text(slug), .text(name), .double(now)]
                ) { $0.int(0) }.first ?? 0
            try c.execute(
                "INSERT INTO project_settings(project_id, grouping) VALUES(?, ?)", .int(id), .int(Int64(GroupingConfig.newProjects.rawValue)))
            return ProjectRecord(id: id, slug: slug, name: name, created: now)
        }
    }

    public func projects() throws -> [ProjectRecord] {
        try db.reading { c in
            // A project without a row was created by this version after the migration: the newest rules.
            try c.rows(
                """
                SELECT p.id, p.slug, p.name, g.grouping, g.keep_frame_variables, p.created, g.store_ip_addresses FROM projects p
                LEFT JOIN project_settings g ON g.project_id = p.id ORDER BY p.id
                """
            ) {
                ProjectRecord(
                    id: $0.int(0), slug: $0.text(1) ?? "", name: $0.text(2) ?? "",
                    groupingConfig: $0.isNull(3) ? .newProjects : GroupingConfig(rawValue: Int($0.int(3))) ?? .newProjects,
                    keepsFrameVariables: !$0.isNull(4) && $0.int(4) != 0, storesIPAddresses: $0.isNull(6) || $0.int(6) != 0,
                    created: $0.double(5))
            }
        }
    }

    public func project(idOrSlug: String) throws -> ProjectRecord? {
        try projects().first { String($0.id) == idOrSlug || $0.slug == idOrSlug }
    }

    public func setGroupingConfig(projectID: Int64, _ config: GroupingConfig) throws {
        try db.writing { c in
            try c.execute(
                "INSERT INTO project_settings(project_id, grouping) VALUES(?, ?) ON CONFLICT(project_id) DO UPDATE SET grouping = excluded.grouping",
                .int(projectID), .int(Int64(config.rawValue)))
        }
    }

    public func setKeepsFrameVariables(projectID: Int64, _ keep: Bool) throws {
        try db.writing { c in
            try c.execute(
                """
                INSERT INTO project_settings(project_id, grouping, keep_frame_variables) VALUES(?, ?, ?)
                ON CONFLICT(project_id) DO UPDATE SET keep_frame_variables = excluded.keep_frame_variables
                """, .int(projectID), .int(Int64(GroupingConfig.newProjects.rawValue)), .int(keep ? 1 : 0))
        }
    }

    public func setStoresIPAddresses(projectID: Int64, _ store: Bool) throws {
        try db.writing { c in
            try c.execute(
                """
                INSERT INTO project_settings(project_id, grouping, store_ip_addresses) VALUES(?, ?, ?)
                ON CONFLICT(project_id) DO UPDATE SET store_ip_addresses = excluded.store_ip_addresses
                """, .int(projectID), .int(Int64(GroupingConfig.newProjects.rawValue)), .int(store ? 1 : 0))
        }
    }

    public func createPublicKey(projectID: Int64, allowedAppIDs: [String]) throws -> PublicKeyRecord {
        let record = PublicKeyRecord(key: Keys.newPublicKey(), projectID: projectID, allowedAppIDs: allowedAppIDs)
        try db.writing { c in
            try c.execute(
                "INSERT INTO public_keys(key, project_id, app_ids, created) VALUES(?, ?, ?, ?)",
                .text(record.key.value), .int(projectID), .text(allowedAppIDs.joined(separator: ",")), .double(Date().timeIntervalSince1970))
        }
        cache.remember(record)
        return record
    }

    public func publicKeys(projectID: Int64?) throws -> [PublicKeyRecord] {
        try db.reading { c in
            try c.rows(
                "SELECT \(SQLCredentials.keyColumns) FROM public_keys WHERE CAST(?1 AS BIGINT) IS NULL OR project_id = ?1 ORDER BY created, key",
                projectID.map { .int($0) } ?? .null, map: SQLCredentials.key)
        }
    }

    public func publicKey(_ key: String) throws -> PublicKeyRecord? {
        if let hit = cache.key(key) { return hit }
        let found = try db.reading { c in
            try c.first("SELECT \(SQLCredentials.keyColumns) FROM public_keys WHERE key = ?", .text(key), map: SQLCredentials.key)
        }
        if let found { cache.remember(found) }
        return found
    }

    public func createServerToken(name: String) throws -> String {
        let token = Keys.newServerToken()
        try db.writing { c in
            try c.execute(
                "INSERT INTO server_tokens(hash, name, prefix, created) VALUES(?, ?, ?, ?)",
                .text(SHA256Hash.hex(Data(token.utf8))), .text(name), .text(String(token.prefix(9))), .double(Date().timeIntervalSince1970))
        }
        return token
    }

    public func revokePublicKey(_ key: String) throws -> Bool {
        let deleted = try db.writing { c in
            try c.rows("DELETE FROM public_keys WHERE key = ? RETURNING key", [.text(key)]) { $0.text(0) }.count
        }
        cache.forgetKey(key)
        return deleted > 0
    }

    public func serverTokens() throws -> [ServerTokenRecord] {
        try db.reading { c in
            try c.rows("SELECT name, prefix, created FROM server_tokens ORDER BY created, prefix", []) {
                ServerTokenRecord(name: $0.text(0) ?? "", prefix: $0.text(1) ?? "", created: $0.double(2))
            }
        }
    }

    public func revokeServerTokens(nameOrPrefix: String) throws -> Int {
        guard !nameOrPrefix.isEmpty else { return 0 }
        let deleted = try db.writing { c in
            try c.rows("DELETE FROM server_tokens WHERE name = ? OR prefix = ? RETURNING hash", [.text(nameOrPrefix), .text(nameOrPrefix)]) {
                $0.text(0)
            }.count
        }
        cache.forgetTokens()
        return deleted
    }

    public func isServerToken(_ token: String) throws -> Bool {
        let h = SHA256Hash.hex(Data(token.utf8))
        if cache.knowsToken(h) { return true }
        let found = try db.reading { c in try c.first("SELECT 1 FROM server_tokens WHERE hash = ?", .text(h)) { _ in true } ?? false }
        if found { cache.rememberToken(h) }
        return found
    }
}

extension SQLiteStore: ProjectAdministrationStore {}
extension PostgresStore: ProjectAdministrationStore {}
