// Releases and deploys as sentry-cli manages them (`releases new/finalize/list`, `deploys new`).
import Foundation
import FaultlineProtocol

public struct ReleaseRecord: Sendable, Equatable {
    public var projectID: Int64
    public var version: String
    public var created: Double
    /// Set by `releases finalize` (Sentry's `dateReleased`).
    public var dateReleased: Double?
}

public struct DeployRecord: Sendable, Equatable {
    public var id: Int64
    public var version: String
    public var environment: String
    public var name: String?
    public var created: Double
}

enum ReleaseRows {
    static func create(_ c: any SQLSession, projectID: Int64, version: String, dateReleased: Double?, now: Double) throws {
        try ReleaseOrder.note(c, projectID: projectID, version: version, now: now)
        if let d = dateReleased { try finalize(c, projectID: projectID, version: version, at: d) }
    }

    static func finalize(_ c: any SQLSession, projectID: Int64, version: String, at: Double) throws {
        try c.execute("UPDATE releases SET date_released = ? WHERE project_id = ? AND version = ?", .double(at), .int(projectID), .text(version))
    }

    static func releases(_ c: any SQLSession, projectIDs: [Int64], version: String? = nil) throws -> [ReleaseRecord] {
        var out: [ReleaseRecord] = []
        for p in projectIDs {
            out += try c.rows(
                """
                SELECT project_id, version, created, date_released FROM releases
                WHERE project_id = ? AND (CAST(? AS TEXT) IS NULL OR version = ?) ORDER BY created DESC LIMIT 1000
                """, [.int(p), version.map(SQLValue.text) ?? .null, version.map(SQLValue.text) ?? .null]
            ) { r in
                ReleaseRecord(projectID: r.int(0), version: r.text(1) ?? "", created: r.double(2), dateReleased: r.isNull(3) ? nil : r.double(3))
            }
        }
        return out.sorted { $0.created > $1.created }
    }

    /// One keyset page of release versions, newest first (a version in several projects counts
    /// once, at its first creation), after the position (`created`, `version`) of the previous
    /// page's last; `projectID` nil: every project.
    static func page(_ c: any SQLSession, projectID: Int64?, after: (created: Double, version: String)?, limit: Int) throws -> [(
        version: String, created: Double
    )] {
        let p = projectID.map(SQLValue.int) ?? .null
        let t = after.map { SQLValue.double($0.created) } ?? .null
        let v = after.map { SQLValue.text($0.version) } ?? .null
        return try c.rows(
            """
            SELECT version, min(created) AS first_created FROM releases WHERE (CAST(? AS BIGINT) IS NULL OR project_id = ?)
            GROUP BY version
            HAVING CAST(? AS DOUBLE PRECISION) IS NULL OR min(created) < ? OR (min(created) = ? AND version < CAST(? AS TEXT))
            ORDER BY first_created DESC, version DESC LIMIT ?
            """, [p, p, t, t, t, v, .int(Int64(limit))]
        ) { (version: $0.text(0) ?? "", created: $0.double(1)) }
    }

    /// A page position as a cursor's text, and back (`KeysetPage` hex-encodes it for clients).
    static func cursor(created: Double, version: String) -> String { "\(created)_\(version)" }

    static func position(_ cursor: String) -> (created: Double, version: String)? {
        guard let sep = cursor.firstIndex(of: "_"), let t = Double(cursor[..<sep]), t.isFinite else { return nil }
        return (t, String(cursor[cursor.index(after: sep)...]))
    }

    static func addDeploy(_ c: any SQLSession, projectID: Int64, version: String, environment: String, name: String?, now: Double) throws -> Int64 {
        try c.first(
            "INSERT INTO release_deploys(project_id, version, environment, name, created) VALUES(?, ?, ?, ?, ?) RETURNING id",
            .int(projectID), .text(version), .text(environment), name.map(SQLValue.text) ?? .null, .double(now)
        ) { $0.int(0) } ?? 0
    }

    static func deploys(_ c: any SQLSession, projectIDs: [Int64], version: String) throws -> [DeployRecord] {
        var out: [DeployRecord] = []
        for p in projectIDs {
            out += try c.rows(
                "SELECT id, version, environment, name, created FROM release_deploys WHERE project_id = ? AND version = ? ORDER BY id",
                [.int(p), .text(version)]
            ) { r in
                DeployRecord(id: r.int(0), version: r.text(1) ?? "", environment: r.text(2) ?? "", name: r.text(3), created: r.double(4))
            }
        }
        return out
    }
}
