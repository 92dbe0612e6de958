// Per-install volume cap: a fixed window counter per (project, install id), answered with 429.
// The windows live in the store (`InstallWindows`): on a database several servers share, every
// admission is one atomic upsert there, so the cap holds cluster-wide (exactly, not per node); on
// SQLite this process is the only counter, so it counts in memory, writes each window behind
// (committed no later than the ingest it admits) and reads a window back after a restart.
import Foundation
import Synchronization

public final class InstallVolumeLimiter: Sendable {
    struct Window { var start: Double; var count: Int }
    private let limit: Int
    private let window: Double
    private let store: (any InstallWindows)?
    private struct Windows {
        var byKey: [String: Window] = [:]
        var lastPrune = 0.0
    }
    private let windows = Mutex(Windows())
    /// Bounds memory when many installs send once: expired windows are pruned past this size.
    private let maxTracked = 200_000

    /// - Parameter store: where windows persist; nil keeps them in this process only.
    public init(limit: Int, windowSeconds: Int, store: (any InstallWindows)? = nil) {
        self.limit = limit
        self.window = Double(windowSeconds)
        self.store = store
    }

    /// The limit `admit` applies unless told another (0: no cap).
    public var defaultLimit: Int { limit }

    /// Counts `count` submissions (an event, items) against `limit` (the limiter's own unless
    /// given); returns nil when allowed, or the seconds until the window reopens (nothing is
    /// counted then).
    public func admit(
        projectID: Int64, installID: String, count: Int = 1, limit: Int? = nil, now: Double = Date().timeIntervalSince1970
    ) -> Int? {
        let limit = limit ?? self.limit
        guard limit > 0 else { return nil }
        if let store, store.sharesInstallWindows {
            // A store that fails here fails the ingest that follows too: admit, and let that report it.
            return (try? store.admitInstall(projectID: projectID, installID: installID, count: count, limit: limit, windowSeconds: window)) ?? nil
        }
        let key = "\(projectID)/\(installID)"
        var known = windows.withLock { $0.byKey[key] }
        if known == nil, let saved = try? store?.installWindow(projectID: projectID, installID: installID) {
            known = Window(start: saved.start, count: saved.count)  // counted before a restart
        }
        return windows.withLock { windows in
            admit(projectID: projectID, installID: installID, known: known, count: count, limit: limit, now: now, in: &windows)
        }
    }

    /// Runs inside `windows`' lock.
    private func admit(
        projectID: Int64, installID: String, known: Window?, count: Int, limit: Int, now: Double, in windows: inout Windows
    ) -> Int? {
        let key = "\(projectID)/\(installID)"
        var w = windows.byKey[key] ?? known ?? Window(start: now, count: 0)
        if now - w.start >= window { w = Window(start: now, count: 0) }
        if w.count >= limit || count > limit - w.count {
            windows.byKey[key] = w
            return max(1, Int((w.start + window - now).rounded(.up)))
        }
        w.count += count
        windows.byKey[key] = w
        store?.saveInstallWindow(projectID: projectID, installID: installID, start: w.start, count: w.count)
        // Pruning is O(n), so it runs at most once a second, never per request: a client rotating
        // install ids cannot make every ingest pay for it. If live windows alone exceed the bound,
        // the table is reset (windows are read back from the store as their installs send again;
        // without a store the cap fails open for a moment rather than memory growing unbounded).
        if windows.byKey.count > maxTracked && now - windows.lastPrune >= 1 {
            windows.lastPrune = now
            windows.byKey = windows.byKey.filter { now - $0.value.start < window }
            if windows.byKey.count > maxTracked { windows.byKey.removeAll(keepingCapacity: true) }
        }
        return nil
    }
}
