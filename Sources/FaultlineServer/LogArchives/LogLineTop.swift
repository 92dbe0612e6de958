// `logs top`: the most frequent line patterns across stored archives. Each archive is inflated
// in memory in 32 KiB pieces (never unpacked to disk), split into lines, parsed as the file
// log's format (LogLineFormat in the SDK) and counted by level + normalised message.
// Archives are scanned on up to `parallelism` threads with a table each, merged at the end.
import FaultlineProtocol
import Foundation

public struct LogTopQuery: Sendable {
    public var projectID: Int64?
    public var release: String?
    /// Only lines logged at or after this time (seconds since 1970, compared with each line's timestamp).
    public var since: Double?
    /// Only lines at or above this level (TRACE … CRITICAL).
    public var minimumLevel: String?
    public var limit = 50
    public init() {}
}

public struct LogPatternCount: Sendable, Equatable {
    public var level: String
    public var pattern: String
    public var count: Int64
    /// Timestamps as written in the lines (ISO 8601 UTC).
    public var firstSeen: String
    public var lastSeen: String
    public var example: String
}

public struct LogTopResult: Sendable {
    public var patterns: [LogPatternCount]
    public var archives: Int
    public var lines: Int64
    public var uncompressedBytes: Int64
    /// Archives that could not be read (missing file, corrupt gzip): skipped and counted.
    public var unreadable: Int
}

public enum LogLineTop {
    static let levels = ["TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL"]

    public static func levelRank(_ name: String) -> Int? { levels.firstIndex(of: name.uppercased()) }

    struct Stats {
        var count: Int64
        var first: [UInt8]
        var last: [UInt8]
        var example: [UInt8]
    }

    /// Scans the archives at `paths` (absolute). `progress(done, total)` is called after each.
    public static func scan(paths: [String], query: LogTopQuery, parallelism: Int = 2,
                            progress: (@Sendable (Int, Int) -> Void)? = nil) -> LogTopResult {
        let minRank = query.minimumLevel.flatMap(levelRank) ?? 0
        let since: [UInt8]? = query.since.map { Array(iso($0).utf8) }
        let workers = max(1, min(parallelism, paths.count))
        let lock = NSLock()
        nonisolated(unsafe) var tables: [[[UInt8]: Stats]] = []
        nonisolated(unsafe) var totals = (lines: Int64(0), bytes: Int64(0), unreadable: 0, done: 0)
        nonisolated(unsafe) var next = 0
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            var table: [[UInt8]: Stats] = [:]
            var lines: Int64 = 0, bytes: Int64 = 0, unreadable = 0
            while true {
                lock.lock()
                let i = next
                next += 1
                lock.unlock()
                guard i < paths.count else { break }
                if let data = FileManager.default.contents(atPath: paths[i]),
                   let (l, b) = try? scanArchive(data, minRank: minRank, since: since, into: &table) {
                    lines += l; bytes += b
                } else { unreadable += 1 }
                lock.lock()
                totals.done += 1
                let done = totals.done
                lock.unlock()
                progress?(done, paths.count)
            }
            lock.lock()
            tables.append(table)
            totals.lines += lines; totals.bytes += bytes; totals.unreadable += unreadable
            lock.unlock()
        }
        var merged = tables.first ?? [:]
        for t in tables.dropFirst() {
            for (k, v) in t {
                if var m = merged[k] {
                    m.count += v.count
                    if v.first.lexicographicallyPrecedes(m.first) { m.first = v.first; m.example = v.example }
                    if m.last.lexicographicallyPrecedes(v.last) { m.last = v.last }
                    merged[k] = m
                } else { merged[k] = v }
            }
        }
        let top = merged.sorted { a, b in a.value.count != b.value.count ? a.value.count > b.value.count : a.key.lexicographicallyPrecedes(b.key) }
            .prefix(max(query.limit, 0))
        let patterns = top.map { k, v -> LogPatternCount in
            let tab = k.firstIndex(of: 9) ?? 0
            return LogPatternCount(level: String(decoding: k[..<tab], as: UTF8.self), pattern: String(decoding: k[(tab + 1)...], as: UTF8.self),
                                   count: v.count, firstSeen: String(decoding: v.first, as: UTF8.self), lastSeen: String(decoding: v.last, as: UTF8.self),
                                   example: String(decoding: v.example, as: UTF8.self))
        }
        return LogTopResult(patterns: Array(patterns), archives: paths.count, lines: totals.lines, uncompressedBytes: totals.bytes, unreadable: totals.unreadable)
    }

    /// One archive into `table`. Returns lines counted and bytes inflated.
    static func scanArchive(_ data: Data, minRank: Int, since: [UInt8]?, into table: inout [[UInt8]: Stats]) throws -> (Int64, Int64) {
        var carry: [UInt8] = []
        var key: [UInt8] = []
        key.reserveCapacity(512)
        var counted: Int64 = 0
        func line(_ l: UnsafeBufferPointer<UInt8>) {
            if count(l, minRank: minRank, since: since, key: &key, table: &table) { counted += 1 }
        }
        let total = try Inflate.inflate(data, limit: Int.max) { piece in
            var start = 0
            if !carry.isEmpty {
                guard let nl = piece.firstIndex(of: 10) else { carry.append(contentsOf: piece); return }
                carry.append(contentsOf: piece[..<nl])
                carry.withUnsafeBufferPointer { line($0) }
                carry.removeAll(keepingCapacity: true)
                start = nl + 1
            }
            var i = start
            while let nl = UnsafeBufferPointer(rebasing: piece[i...]).firstIndex(of: 10) {
                line(UnsafeBufferPointer(rebasing: piece[i..<(i + nl)]))
                i += nl + 1
            }
            if i < piece.count { carry.append(contentsOf: piece[i...]) }
        }
        if !carry.isEmpty { carry.withUnsafeBufferPointer { line($0) } }
        return (counted, Int64(total))
    }

    /// Parses the seven TAB-separated fields; other lines count under level "-" whole.
    @inline(__always)
    static func count(_ l: UnsafeBufferPointer<UInt8>, minRank: Int, since: [UInt8]?, key: inout [UInt8], table: inout [[UInt8]: Stats]) -> Bool {
        guard !l.isEmpty else { return false }
        var tabs: (Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0)
        var t = 0
        for i in 0..<l.count where l[i] == 9 {
            switch t { case 0: tabs.0 = i; case 1: tabs.1 = i; case 2: tabs.2 = i; case 3: tabs.3 = i; case 4: tabs.4 = i; default: tabs.5 = i }
            t += 1
            if t == 6 { break }
        }
        key.removeAll(keepingCapacity: true)
        let ts: UnsafeBufferPointer<UInt8>
        let message: UnsafeBufferPointer<UInt8>
        if t == 6 {
            let level = UnsafeBufferPointer(rebasing: l[(tabs.0 + 1)..<tabs.1])
            if minRank > 0 {
                guard let r = rank(level), r >= minRank else { return false }
            }
            ts = UnsafeBufferPointer(rebasing: l[0..<tabs.0])
            if let since, ts.lexicographicallyPrecedes(since) { return false }
            key.append(contentsOf: level)
            message = UnsafeBufferPointer(rebasing: l[(tabs.4 + 1)..<tabs.5])
        } else {
            if minRank > 0 || since != nil { return false }
            ts = UnsafeBufferPointer(start: nil, count: 0)
            key.append(0x2d)
            message = l
        }
        key.append(9)
        LogLineNormaliser.normalise(message, into: &key)
        if let at = table.index(forKey: key) {
            table.values[at].count += 1
            if !ts.isEmpty {
                if ts.lexicographicallyPrecedes(table.values[at].first) || table.values[at].first.isEmpty {
                    table.values[at].first = Array(ts); table.values[at].example = Array(message.prefix(1000))
                }
                if table.values[at].last.lexicographicallyPrecedes(ts) { table.values[at].last = Array(ts) }
            }
        } else {
            table[key] = Stats(count: 1, first: Array(ts), last: Array(ts), example: Array(message.prefix(1000)))
        }
        return true
    }

    private static let levelBytes: [[UInt8]] = levels.map { Array($0.utf8) }
    @inline(__always) static func rank(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        levelBytes.firstIndex { $0.elementsEqual(b) }
    }

    /// `2026-12-01T10:20:30.123Z`, the file log's timestamp form (sorts as text).
    public static func iso(_ seconds: Double) -> String {
        // `since` comes from a query string: infinity or NaN must not trap in time_t(…).
        let t = seconds.isFinite ? min(max(seconds, 0), 253_402_300_799) : 0
        var time = time_t(t.rounded(.down))
        var tm = tm()
        gmtime_r(&time, &tm)
        let ms = Int((t - t.rounded(.down)) * 1000)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), ms)
    }
}
