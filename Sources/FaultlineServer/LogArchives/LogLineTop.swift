// `logs top`: the most frequent line patterns across stored archives, in memory bounded by
// constants, not by the archives: lines are read capped at `maxLineBytes` (LogLineReader) and
// counted in a fixed number of counters (LogPatternSketch). Archives are scanned on up to
// `parallelism` threads with a sketch each; the sketches are merged at the end. When more
// distinct patterns arrived than there are counters, the counts are only bounds: a second pass
// over the same archives counts the candidates exactly, so every count reported is exact.
import FaultlineThreads
import FaultlineProtocol
import Foundation
import Synchronization

public struct LogTopQuery: Sendable {
    public var projectID: Int64?
    public var release: String?
    /// Only lines logged at or after this time (seconds since 1970, compared with each line's timestamp).
    public var since: Double?
    /// Only lines at or above this level (TRACE … CRITICAL).
    public var minimumLevel: String?
    /// Patterns listed, at most `LogLineTop.maxListed`.
    public var limit = 50
    public init() {}
}

public struct LogPatternCount: Sendable, Equatable {
    public var level: String
    /// At most `LogLineTop.maxPatternBytes`; ends in `…` when the message or pattern was cut.
    public var pattern: String
    /// Exact: the number of lines with this level and pattern.
    public var count: Int64
    /// Timestamps as written in the lines (ISO 8601 UTC).
    public var firstSeen: String
    public var lastSeen: String
    /// The message of the earliest line, at most `LogLineTop.maxExampleBytes`.
    public var example: String
}

public struct LogTopResult: Sendable {
    public var patterns: [LogPatternCount]
    public var archives: Int
    public var lines: Int64
    public var uncompressedBytes: Int64
    /// Archives that could not be read (missing file, corrupt gzip): skipped and counted.
    public var unreadable: Int
    /// Lines longer than `LogLineTop.maxLineBytes`, counted by their first `maxLineBytes`.
    public var truncatedLines: Int64
    /// More distinct patterns than counters: a second pass made the counts exact.
    public var sketchOverflowed: Bool
    /// No pattern missing from `patterns` occurs more often than this (0: every pattern is listed).
    public var unlistedAtMost: Int64
}

public enum LogLineTop {
    /// The file log's level names; a line's rank is its level's `LogLevel.rawValue`.
    static let levels = LogLevel.fileLogNames
    /// Bytes of a line that count; the rest is skipped as it is inflated.
    public static let maxLineBytes = 4096
    /// Bytes of a pattern (after normalisation, which can lengthen a message).
    public static let maxPatternBytes = 4096
    /// Bytes of a pattern's example message.
    public static let maxExampleBytes = 1000
    /// Bytes kept of a timestamp or level field.
    static let maxFieldBytes = 64
    /// Counters per scanning thread: with 4 KiB patterns and 1 KB examples, about 45 MB at most each.
    public static let counters = 8192
    /// Patterns a query may list.
    public static let maxListed = 1000

    /// Any name `LogLevel` reads (`warn` and `fatal` too).
    public static func levelRank(_ name: String) -> Int? { LogLevel(name: name)?.rawValue }

    /// Scans the archives at `paths` (absolute). `progress(pass, done, total)` is called after
    /// each archive; pass 2 happens only when the sketch overflowed. `counters` is for tests.
    public static func scan(
        paths: [String], query: LogTopQuery, parallelism: Int = 2, counters: Int = counters,
        progress: (@Sendable (Int, Int, Int) -> Void)? = nil
    ) -> LogTopResult {
        var filter = LogLineFilter()
        filter.minRank = query.minimumLevel.flatMap(levelRank) ?? 0
        filter.since = query.since.map { Array(iso($0).utf8) }
        let limit = min(max(query.limit, 0), maxListed)
        let capacity = max(counters, limit, 1)

        let first = forEachArchive(
            paths, parallelism: parallelism, pass: 1, progress: progress,
            make: { LogPatternSketch(capacity: capacity) }, filter: filter)
        let bounds = LogPatternBounds(first.sinks)
        var counted: [(LogPatternSketch.Counter, Int64)]
        var unreadable = first.unreadable
        // What is known of patterns that are not counted exactly: never held a counter (at most
        // `missingAtMost`), or held one but are no candidate (at most their upper bound).
        var uncountedAtMost: Int64 = 0
        if !bounds.evicted {
            counted = bounds.entries.map { ($0.counter, $0.upper) }
        } else {
            // Candidates: every pattern that could still be among the top `limit` — its upper bound
            // reaches the limit-th largest lower bound. Counted exactly by a second pass.
            let lowers = bounds.entries.map(\.lower).sorted(by: >)
            let threshold = max(limit > 0 && lowers.count >= limit ? lowers[limit - 1] : 1, 1)
            var tally = LogPatternTally()
            uncountedAtMost = bounds.missingAtMost
            for e in bounds.entries {
                if e.upper >= threshold { tally.adopt(e.counter) } else { uncountedAtMost = max(uncountedAtMost, e.upper) }
            }
            let second = forEachArchive(paths, parallelism: parallelism, pass: 2, progress: progress, make: { tally }, filter: filter)
            unreadable.formUnion(second.unreadable)
            counted = LogPatternTally.merged(second.sinks)
        }
        counted.sort { a, b in a.1 != b.1 ? a.1 > b.1 : a.0.key.lexicographicallyPrecedes(b.0.key) }
        let listed = counted.prefix(limit).filter { $0.1 > 0 }
        let unlistedAtMost = max(uncountedAtMost, counted.dropFirst(listed.count).first?.1 ?? 0)
        let patterns = listed.map { c, count -> LogPatternCount in
            let tab = c.key.firstIndex(of: 9) ?? 0
            return LogPatternCount(
                level: String(decoding: c.key[..<tab], as: UTF8.self), pattern: String(decoding: c.key[(tab + 1)...], as: UTF8.self),
                count: count, firstSeen: String(decoding: c.first, as: UTF8.self), lastSeen: String(decoding: c.last, as: UTF8.self),
                example: String(decoding: c.example, as: UTF8.self))
        }
        return LogTopResult(
            patterns: patterns, archives: paths.count, lines: first.totals.counted, uncompressedBytes: first.totals.inflatedBytes,
            unreadable: unreadable.count, truncatedLines: first.totals.truncated, sketchOverflowed: bounds.evicted,
            unlistedAtMost: unlistedAtMost)
    }

    /// Reads every archive into a sink of its thread's (made by `make`), on up to `parallelism`
    /// threads, one archive at a time each. Returns the sinks, the totals and the indices of the
    /// archives that could not be read.
    static func forEachArchive<S: LogLineSink>(
        _ paths: [String], parallelism: Int, pass: Int, progress: (@Sendable (Int, Int, Int) -> Void)?,
        make: () -> S, filter: LogLineFilter
    ) -> (sinks: [S], totals: LogLineTotals, unreadable: Set<Int>) {
        let workers = max(1, min(parallelism, paths.count))
        // Guards the variables below; a sink is not Sendable, so they stay outside it.
        let lock = Mutex<Void>(())
        nonisolated(unsafe) var sinks = (0..<workers).map { _ in make() }
        nonisolated(unsafe) var totals = LogLineTotals()
        nonisolated(unsafe) var unreadable = Set<Int>()
        nonisolated(unsafe) var next = 0, done = 0
        ParallelWork.onWorkers(workers) { w in
            var sink = lock.withLock { _ in sinks[w] }
            var mine = LogLineTotals()
            var failed: [Int] = []
            while true {
                let i = lock.withLock { _ in
                    defer { next += 1 }
                    return next
                }
                guard i < paths.count else { break }
                // The compressed file whole (at most `LogArchiveLimits.maxCompressedBytes` as received).
                if let data = FileManager.default.contents(atPath: paths[i]),
                    let found = try? LogLineReader.read(data, filter: filter, into: &sink)
                {
                    mine = mine + found
                } else {
                    failed.append(i)
                }
                let d = lock.withLock { _ in
                    done += 1
                    return done
                }
                progress?(pass, d, paths.count)
            }
            lock.withLock { _ in
                sinks[w] = sink
                totals = totals + mine
                unreadable.formUnion(failed)
            }
        }
        return (sinks, totals, unreadable)
    }

    /// The first `maxExampleBytes` of a message, ending in `…` when cut here or at the line cap.
    static func example(_ message: UnsafeBufferPointer<UInt8>, cut: Bool) -> [UInt8] {
        guard message.count > maxExampleBytes || cut else { return Array(message) }
        let keep = LogLineReader.utf8Boundary(message, min(message.count, maxExampleBytes))
        return Array(message[..<keep]) + LogLineReader.ellipsis
    }

    private static let levelBytes: [[UInt8]] = levels.map { Array($0.utf8) }
    @inline(__always) static func rank(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
        levelBytes.firstIndex { $0.elementsEqual(b) }
    }

    /// `2026-12-01T10:20:30.123Z`, the file log's timestamp form (sorts as text).
    public static func iso(_ seconds: Double) -> String {
        // `since` comes from a query string: infinity or NaN must not trap in time_t(…).
        SentryTimestamp.rfc3339(seconds.isFinite ? min(max(seconds, 0), SentryTimestamp.latest) : 0, milliseconds: .truncated)
    }
}
