// Retention: archives past the age limit go, then the oldest while the total is over the cap.
import Foundation
import Synchronization

final class LogArchiveRetention: Sendable {
    let store: LogArchiveStore
    let files: LogArchiveFiles
    let limits: LogArchiveLimits
    /// When the last pass began; held for a whole pass, so two never overlap.
    private let lastRun = Mutex(0.0)

    init(store: LogArchiveStore, files: LogArchiveFiles, limits: LogArchiveLimits) {
        self.store = store; self.files = files; self.limits = limits
    }

    /// Runs a pass unless one ran in the last `minimumInterval` seconds. Returns archives deleted.
    @discardableResult
    func run(now: Double = Date().timeIntervalSince1970, minimumInterval: Double = 0) throws -> Int {
        try lastRun.withLock { lastRun in
            guard now - lastRun >= minimumInterval else { return 0 }
            lastRun = now
            return try pass(now: now)
        }
    }

    private func pass(now: Double) throws -> Int {
        var deleted = 0
        if limits.maxAgeSeconds > 0 {
            while true {
                let old = try store.oldestLogArchives(limit: 500).filter { $0.received < now - limits.maxAgeSeconds }
                if old.isEmpty { break }
                try delete(old)
                deleted += old.count
            }
        }
        if limits.maxTotalBytes > 0 {
            var total = try store.logArchiveTotalBytes()
            while total > limits.maxTotalBytes {
                var batch: [LogArchiveRecord] = []
                for a in try store.oldestLogArchives(limit: 500) where total > limits.maxTotalBytes {
                    batch.append(a)
                    total -= a.compressedBytes
                }
                if batch.isEmpty { break }
                try delete(batch)
                deleted += batch.count
            }
        }
        return deleted
    }

    /// Row first, then file: a crash in between leaves an orphan file the next start sweeps,
    /// never a row whose download fails.
    private func delete(_ archives: [LogArchiveRecord]) throws {
        try store.deleteLogArchives(ids: archives.map(\.id))
        for a in archives { files.remove(a.storageName) }
    }
}
