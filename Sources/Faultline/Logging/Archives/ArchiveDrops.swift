// Archives the caps deleted before they were uploaded: counted in the outbox's drop counters
// (and so reported to the server as client reports), never silently.
import Foundation
import Synchronization

enum ArchiveDrops {
    /// Losses seen before `Faultline.start` made an outbox; handed over at start.
    private static let early = Mutex(0)

    static func record(_ n: Int) {
        guard n > 0 else { return }
        if let outbox = SDKState.shared.currentOutbox { outbox.countDrop(.logArchiveEvicted, n) } else { early.withLock { $0 += n } }
    }

    static func handOver(to outbox: Outbox) {
        let n = early.withLock { v -> Int in
            defer { v = 0 }; return v
        }
        if n > 0 { outbox.countDrop(.logArchiveEvicted, n) }
    }
}
