// Per-install volume cap: a fixed window counter per (project, install id), answered with 429.
import Foundation

public final class InstallVolumeLimiter: @unchecked Sendable {
    struct Window { var start: Double; var count: Int }
    private let limit: Int
    private let window: Double
    private let lock = NSLock()
    private var windows: [String: Window] = [:]
    /// Bounds memory when many installs send once: expired windows are pruned past this size.
    private let maxTracked = 200_000
    private var lastPrune = 0.0

    public init(limit: Int, windowSeconds: Int) {
        self.limit = limit
        self.window = Double(windowSeconds)
    }

    /// Counts `count` submissions (an event, items); returns nil when allowed, or the seconds
    /// until the window reopens (nothing is counted then).
    public func admit(projectID: Int64, installID: String, count: Int = 1, now: Double = Date().timeIntervalSince1970) -> Int? {
        guard limit > 0 else { return nil }
        let key = "\(projectID)/\(installID)"
        lock.lock(); defer { lock.unlock() }
        var w = windows[key] ?? Window(start: now, count: 0)
        if now - w.start >= window { w = Window(start: now, count: 0) }
        if w.count >= limit || count > limit - w.count {
            windows[key] = w
            return max(1, Int((w.start + window - now).rounded(.up)))
        }
        w.count += count
        windows[key] = w
        // Pruning is O(n), so it runs at most once a second, never per request: a client rotating
        // install ids cannot make every ingest pay for it. If live windows alone exceed the bound,
        // the table is reset: the cap fails open for a moment rather than memory growing unbounded.
        if windows.count > maxTracked && now - lastPrune >= 1 {
            lastPrune = now
            windows = windows.filter { now - $0.value.start < window }
            if windows.count > maxTracked { windows.removeAll(keepingCapacity: true) }
        }
        return nil
    }
}
