// Where the per-install cap (Ingest/InstallVolumeLimiter) keeps its fixed windows, so a restart
// does not reopen every install's window and several nodes on one database share one count.
import Foundation

public protocol InstallWindows: AnyObject, Sendable {
    /// True when other servers may count in the same windows (a shared database): the limiter then
    /// asks `admitInstall` for every submission. False: this process is the only counter, so it
    /// counts in memory and persists through `saveInstallWindow` (restored by `installWindow`).
    var sharesInstallWindows: Bool { get }
    /// Counts `count` submissions of one install in its current window, atomically: nil when they
    /// fit under `limit`, else the whole seconds until the window reopens (nothing counted). A
    /// window older than `windowSeconds` (on the store's clock) starts over.
    func admitInstall(projectID: Int64, installID: String, count: Int, limit: Int, windowSeconds: Double) throws -> Int?
    /// The stored window of an install (start, count), nil if none.
    func installWindow(projectID: Int64, installID: String) throws -> (start: Double, count: Int)?
    /// Stores an install's window without waiting for the commit; on SQLite it commits no later than
    /// the ingest the same request stores next (one writer, first in first out).
    func saveInstallWindow(projectID: Int64, installID: String, start: Double, count: Int)
    /// Deletes windows that started before `cutoff` (at most `limit`); returns how many.
    func deleteInstallWindows(startedBefore cutoff: Double, limit: Int) throws -> Int
}
