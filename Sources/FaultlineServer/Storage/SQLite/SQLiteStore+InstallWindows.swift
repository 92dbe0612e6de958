// `InstallWindows` over SQLite: one process counts (in memory, in the limiter); the windows are
// written behind on the writer thread and read back after a restart.
import Foundation

extension SQLiteStore: InstallWindows {
    public var sharesInstallWindows: Bool { false }

    public func admitInstall(projectID: Int64, installID: String, count: Int, limit: Int, windowSeconds: Double) throws -> Int? {
        let now = Date().timeIntervalSince1970
        return try writer.sync { c in
            var w: (start: Double, count: Int64)?
            try c.query(
                "SELECT window_start, count FROM install_windows WHERE project_id = ? AND install_id = ?",
                .int(projectID), .text(installID)
            ) { w = ($0.double(0), $0.int(1)) }
            if let s = w?.start, now - s >= windowSeconds { w = nil }
            let current = w ?? (now, 0)
            if current.count + Int64(count) > Int64(limit) { return max(1, Int((current.start + windowSeconds - now).rounded(.up))) }
            try c.run(
                "INSERT OR REPLACE INTO install_windows(project_id, install_id, window_start, count) VALUES(?, ?, ?, ?)",
                .int(projectID), .text(installID), .double(current.start), .int(current.count + Int64(count)))
            return nil
        }
    }

    public func installWindow(projectID: Int64, installID: String) throws -> (start: Double, count: Int)? {
        try read { c in
            var w: (Double, Int)?
            try c.query(
                "SELECT window_start, count FROM install_windows WHERE project_id = ? AND install_id = ?",
                .int(projectID), .text(installID)
            ) { w = ($0.double(0), Int($0.int(1))) }
            return w
        }
    }

    public func saveInstallWindow(projectID: Int64, installID: String, start: Double, count: Int) {
        // One statement per ingest: rerunnable, so it rides in the batch without a savepoint.
        writer.async(rerunnable: true) { c in
            try c.run(
                "INSERT OR REPLACE INTO install_windows(project_id, install_id, window_start, count) VALUES(?, ?, ?, ?)",
                .int(projectID), .text(installID), .double(start), .int(Int64(count)))
        }
    }

    public func deleteInstallWindows(startedBefore cutoff: Double, limit: Int) throws -> Int {
        try writer.sync { c in
            try c.run(
                """
                DELETE FROM install_windows WHERE (project_id, install_id) IN (
                  SELECT project_id, install_id FROM install_windows WHERE window_start < ? LIMIT ?)
                """, .double(cutoff), .int(Int64(limit)))
        }
    }
}
