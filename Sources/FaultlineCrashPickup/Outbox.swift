// The disk-backed queue: one atomic file per envelope, sent oldest first, capped in bytes.
import FoundationEssentials
import Glibc
import FaultlineProtocol
import Synchronization
import FaultlineFiles

/// Why an envelope was dropped; reported to the server as client reports.
public enum DropReason: String, Sendable, CaseIterable {
    case queueOverflow = "queue_overflow"
    case diskWriteFailed = "disk_write_failed"
    case rejectedByServer = "rejected_by_server"
    case corrupt = "corrupt"
    /// A rolled log archive deleted by the rolling logger's caps before it was uploaded.
    case logArchiveEvicted = "log_archive_evicted"
}

/// Envelopes waiting to be sent. File names sort in enqueue order (a nanosecond timestamp and a
/// sequence number), so files left by an earlier run are sent before new ones. A crash or kill -9
/// loses nothing already renamed into place; `sync` makes it survive a reboot too.
public final class Outbox: Sendable {
    public struct Entry: Sendable, Hashable {
        public let path: String
        public let size: Int
        /// File names end in the event id, `transaction`, `session`, `clientreport`, or `noevent`
        /// (logs). 0: logs and transactions, evicted first; 1: events; 2: session updates and
        /// client reports, evicted last.
        var evictionRank: Int {
            if path.hasSuffix("-noevent.envelope") || path.hasSuffix("-transaction.envelope") { return 0 }
            // Session updates are a few hundred bytes and what release health counts by: a burst
            // of logs evicted a session's opening update, and the server never counted it.
            if path.hasSuffix("-clientreport.envelope") || path.hasSuffix("-session.envelope") { return 2 }
            return 1
        }
    }

    public let directory: String
    public let byteCap: Int
    private let sequence = Atomic<UInt64>(0)
    private let drops = Mutex<[DropReason: Int]>([:])  // since start, never reset
    private let unreported = Mutex<[Loss: Int]>([:])  // not yet sent as a client report
    private struct Index { var entries: [Entry] = []; var bytes = 0 }
    private let index = Mutex(Index())

    public init(directory: String, byteCap: Int = 1_000_000) throws {
        self.directory = directory
        self.byteCap = byteCap
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        AtomicFile.removeAbandonedTemporaries(in: directory)  // left by a writer killed mid-write
        let existing = Outbox.scan(directory)
        index.withLock { $0 = Index(entries: existing, bytes: existing.reduce(0) { $0 + $1.size }) }
        // Drops an earlier run counted but could not report (it was killed) are reported now.
        if let data = FileManager.default.contents(atPath: dropsFile), let saved = try? JSONValue.parse(data) {
            let restored = Self.losses(saved)
            unreported.withLock { $0 = restored }
        }
    }

    /// The saved losses: client-report entries, or (written by an earlier version) counts by
    /// DropReason, which knew no category. A file's numbers are clamped.
    private static func losses(_ saved: JSONValue) -> [Loss: Int] {
        func clamped(_ v: JSONValue?) -> Int? { v?.int64Value.map { Int(min(max($0, 0), 1 << 48)) } }
        var out: [Loss: Int] = [:]
        if let entries = saved.arrayValue {
            for e in entries {
                guard let reason = e["reason"]?.stringValue, let category = e["category"]?.stringValue, let n = clamped(e["quantity"]) else { continue }
                out[Loss(reason: reason, category: category), default: 0] += n
            }
        } else if let byReason = saved.objectValue {
            for (k, v) in byReason {
                guard let reason = DropReason(rawValue: k), let n = clamped(v) else { continue }
                out[Loss(reason: reason.sentryReason, category: "default"), default: 0] += n
            }
        }
        return out
    }

    private var dropsFile: String { directory + "/.unreported-drops.json" }

    /// Losses are rare; writing them through keeps the count honest across kill -9.
    private func persistUnreported(_ d: [Loss: Int]) {
        if d.isEmpty { unlink(dropsFile) } else { try? AtomicFile.write(JSONValue.array(Self.discardedEvents(d)).serialized(), to: dropsFile) }
    }

    /// Losses as a client report's `discarded_events`, in a stable order.
    public static func discardedEvents(_ d: [Loss: Int]) -> [JSONValue] {
        d.sorted { ($0.key.reason, $0.key.category) < ($1.key.reason, $1.key.category) }.map {
            ["reason": .string($0.key.reason), "category": .string($0.key.category), "quantity": .int(Int64($0.value))]
        }
    }

    /// Writes the envelope durably, then drops the oldest entries while over the byte cap.
    @discardableResult
    public func enqueue(_ envelope: Envelope, sync: Bool = true) -> Bool {
        let data = envelope.serialized()
        guard data.count <= byteCap else { countDrop(.queueOverflow, envelope: envelope); return false }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let seq = sequence.add(1, ordering: .relaxed).newValue
        let nanoseconds = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        let kind: String
        switch envelope.items.first?.type {
        case "transaction": kind = "transaction"  // traces go before crashes
        case "client_report": kind = "clientreport"
        case "session": kind = "session"
        default: kind = envelope.eventID ?? "noevent"
        }
        // `%020llu-%010llu-%@.envelope`: zero-padded so names sort by time, then sequence.
        let name = String(nanoseconds).zeroPadded(toLength: 20) + "-" + String(UInt64(seq)).zeroPadded(toLength: 10) + "-" + kind + ".envelope"
        let entry = Entry(path: directory + "/" + name, size: data.count)
        guard write(data, to: entry.path, sync: sync) else {
            countDrop(.diskWriteFailed, envelope: envelope)
            return false
        }
        // Drop the oldest while over the cap. The index lives in memory (scanned once at init),
        // so an enqueue costs one file write, not a directory listing.
        let evicted: [Entry] = index.withLock { ix in
            ix.entries.append(entry)
            ix.bytes += entry.size
            var out: [Entry] = []
            while ix.bytes > byteCap, ix.entries.count > 1 {
                // Events (crashes, captured errors) are what users look for: logs and sessions go
                // first, oldest first; then the oldest event. Client reports (tiny, and the only
                // record of these very drops) go last.
                let victim = ix.entries.firstIndex { $0.evictionRank == 0 } ?? ix.entries.firstIndex { $0.evictionRank == 1 } ?? 0
                let evicted = ix.entries.remove(at: victim)
                ix.bytes -= evicted.size
                out.append(evicted)
            }
            return out
        }
        for e in evicted {
            // Read before it goes, so the report says what was lost (eviction is rare).
            let lost = FileManager.default.contents(atPath: e.path).flatMap { try? Envelope.parse($0) }
            unlink(e.path)
            if let lost { countDrop(.queueOverflow, envelope: lost) } else { countDrop(.queueOverflow) }
        }
        return true
    }

    /// One envelope file. A folder that has gone (the app's data directory deleted while it runs)
    /// is made again, with its parents, and the write tried once more: otherwise every later
    /// envelope would be lost until a restart. Only a write that fails then too is a loss.
    private func write(_ data: Data, to path: String, sync: Bool) -> Bool {
        do {
            try AtomicFile.write(data, to: path, sync: sync)
            return true
        } catch let e as FaultlineFiles.POSIXError where e.code == ENOENT {
            guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)) != nil else { return false }
            return (try? AtomicFile.write(data, to: path, sync: sync)) != nil
        } catch {
            return false
        }
    }

    /// Pending entries, oldest first.
    public func pending() -> [Entry] { index.withLock { $0.entries } }

    private static func scan(_ directory: String) -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.hasSuffix(".envelope") && !$0.hasPrefix(".") }.sorted().compactMap { name in
            let path = directory + "/" + name
            var st = stat()
            guard stat(path, &st) == 0 else { return nil }
            return Entry(path: path, size: Int(st.st_size))
        }
    }

    /// The envelope, or nil if it is gone (another process sharing the directory sent it: not a
    /// loss) or corrupt (removed and counted).
    public func read(_ entry: Entry) -> Envelope? {
        guard let data = FileManager.default.contents(atPath: entry.path) else {
            remove(entry)
            return nil
        }
        guard let env = try? Envelope.parse(data) else {
            remove(entry)
            countDrop(.corrupt)
            return nil
        }
        return env
    }

    public func remove(_ entry: Entry) {
        unlink(entry.path)
        forget(entry)
    }

    /// Drops `entry` from this process's index (another process sent and removed its file).
    public func forget(_ entry: Entry) {
        index.withLock { ix in
            if let i = ix.entries.firstIndex(of: entry) { ix.entries.remove(at: i); ix.bytes -= entry.size }
        }
    }

    /// `n` things of `category` lost for `reason` (log lines the buffer had no room for, log
    /// archives the caps deleted); the local counts take `n` too.
    public func countDrop(_ reason: DropReason, _ n: Int = 1, category: String = "default") {
        record(reason, envelopes: n, losses: [(category, n)])
    }

    /// An envelope lost for `reason`: one in the local counts, each of its items in the report.
    public func countDrop(_ reason: DropReason, envelope: Envelope) {
        record(reason, envelopes: 1, losses: Loss.quantities(of: envelope))
    }

    private func record(_ reason: DropReason, envelopes: Int, losses: [(category: String, quantity: Int)]) {
        // Saturating: a count restored from disk (or a very long life) must not trap the app.
        func add<K: Hashable>(_ counts: inout [K: Int], _ key: K, _ n: Int) {
            let (sum, overflow) = counts[key, default: 0].addingReportingOverflow(n)
            counts[key] = overflow ? Int.max : sum
        }
        drops.withLock { add(&$0, reason, envelopes) }
        unreported.withLock { u in
            for (category, n) in losses where n > 0 { add(&u, Loss(reason: reason.sentryReason, category: category), n) }
            persistUnreported(u)
        }
    }

    /// Envelopes dropped since start, by reason. Honest: every loss is counted somewhere here.
    public var droppedCounts: [DropReason: Int] { drops.withLock { $0 } }

    /// Losses not yet reported to the server; taking them resets this view but not the totals.
    public func takeUnreportedLosses() -> [Loss: Int] {
        unreported.withLock { d in
            defer { d = [:]; persistUnreported([:]) }; return d
        }
    }
}
