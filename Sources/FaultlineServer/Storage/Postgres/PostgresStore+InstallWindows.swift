// `InstallWindows` over PostgreSQL: every node counts in the same rows, so the cap holds
// cluster-wide. One upsert per admission, on the database's clock, atomic by itself and run as its
// own implicit transaction on a connection whose commits do not wait for the WAL flush
// (`synchronous_commit = off` for that session): a count lost to a database crash lets an install
// send a little more, it never loses an event.
import Foundation

extension PostgresStore: InstallWindows {
    public var sharesInstallWindows: Bool { true }

    public func admitInstall(projectID: Int64, installID: String, count: Int, limit: Int, windowSeconds: Double) throws -> Int? {
        guard count <= limit else {
            return try installWindow(projectID: projectID, installID: installID).map {
                max(1, Int(($0.start + windowSeconds - Date().timeIntervalSince1970).rounded(.up)))
            } ?? Int(windowSeconds)
        }
        return try unflushedPool.autocommit { c in
            let now = "extract(epoch FROM clock_timestamp())"
            let admitted = try c.query(
                """
                INSERT INTO install_windows(project_id, install_id, window_start, count) VALUES($1, $2, \(now), $3)
                ON CONFLICT(project_id, install_id) DO UPDATE SET
                  window_start = CASE WHEN install_windows.window_start <= \(now) - $5::double precision THEN \(now) ELSE install_windows.window_start END,
                  count = CASE WHEN install_windows.window_start <= \(now) - $5::double precision THEN $3 ELSE install_windows.count + $3 END
                WHERE install_windows.window_start <= \(now) - $5::double precision OR install_windows.count + $3 <= $4
                """, .int(projectID), .text(installID), .int(Int64(count)), .int(Int64(limit)), .double(windowSeconds))
            if admitted > 0 { return nil }
            var retry = 1
            try c.query(
                "SELECT greatest(1, ceil(window_start + $3::double precision - \(now)))::bigint FROM install_windows WHERE project_id = $1 AND install_id = $2",
                .int(projectID), .text(installID), .double(windowSeconds)
            ) { retry = Int($0.int(0)) }
            return retry
        }
    }

    public func installWindow(projectID: Int64, installID: String) throws -> (start: Double, count: Int)? {
        try pool.transaction(readOnly: true) { c in
            var w: (Double, Int)?
            try c.query(
                "SELECT window_start, count FROM install_windows WHERE project_id = $1 AND install_id = $2",
                .int(projectID), .text(installID)
            ) { w = ($0.double(0), Int($0.int(1))) }
            return w
        }
    }

    public func saveInstallWindow(projectID: Int64, installID: String, start: Double, count: Int) {
        _ = try? unflushedPool.autocommit { c in
            try c.query(
                """
                INSERT INTO install_windows(project_id, install_id, window_start, count) VALUES($1, $2, $3, $4)
                ON CONFLICT(project_id, install_id) DO UPDATE SET window_start = EXCLUDED.window_start, count = EXCLUDED.count
                """, .int(projectID), .text(installID), .double(start), .int(Int64(count)))
        }
    }

    public func deleteInstallWindows(startedBefore cutoff: Double, limit: Int) throws -> Int {
        try pool.transaction { c in
            try c.query(
                """
                DELETE FROM install_windows WHERE (project_id, install_id) IN (
                  SELECT project_id, install_id FROM install_windows WHERE window_start < $1 LIMIT $2)
                """, .double(cutoff), .int(Int64(limit)))
        }
    }
}
