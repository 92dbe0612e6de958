// Reading one archive for `logs top`: inflated in 32 KiB pieces, split into lines of at most
// `LogLineTop.maxLineBytes` (the rest of a longer line streams past and is never held: a single
// 255 MiB line costs 4 KiB), parsed as the file log's format (LogLineFormat in the SDK) and handed
// to a sink as level + normalised message.
import FaultlineProtocol
import Foundation

/// Where counted lines go: the first pass's sketch, the second pass's exact tally.
protocol LogLineSink {
    /// `key` is level, TAB, pattern; `timestamp` and `message` are valid during the call only;
    /// `cut`: the message was cut at the line cap.
    mutating func add(key: [UInt8], timestamp: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>, cut: Bool)
}

/// Which lines count (`--level`, `--since`).
struct LogLineFilter {
    var minRank = 0
    /// ISO 8601 text: lines with an earlier timestamp do not count.
    var since: [UInt8]?
}

/// What reading archives found.
struct LogLineTotals {
    var counted: Int64 = 0
    var inflatedBytes: Int64 = 0
    /// Lines longer than the cap, counted by their first `maxLineBytes`.
    var truncated: Int64 = 0

    static func + (a: Self, b: Self) -> Self {
        Self(counted: a.counted + b.counted, inflatedBytes: a.inflatedBytes + b.inflatedBytes, truncated: a.truncated + b.truncated)
    }
}

enum LogLineReader {
    static let ellipsis: [UInt8] = Array("…".utf8)

    /// One archive (gzip) into `sink`. Throws on a corrupt or truncated archive.
    static func read<S: LogLineSink>(_ archive: Data, filter: LogLineFilter, into sink: inout S) throws -> LogLineTotals {
        let cap = LogLineTop.maxLineBytes
        var totals = LogLineTotals()
        // The start of a line that continues in the next piece: at most `cap` bytes, `carryCut`
        // once more arrived (those are dropped as they stream by).
        var carry: [UInt8] = []
        carry.reserveCapacity(cap)
        var carryCut = false
        var key: [UInt8] = []
        key.reserveCapacity(LogLineTop.maxPatternBytes + 64)
        func line(_ l: UnsafeBufferPointer<UInt8>, cut: Bool) {
            if cut { totals.truncated += 1 }
            if parse(l, cut: cut, filter: filter, key: &key, sink: &sink) { totals.counted += 1 }
        }
        func flushCarry() {
            let keep = carryCut ? utf8Boundary(carry, carry.count) : carry.count
            carry.withUnsafeBufferPointer { line(UnsafeBufferPointer(rebasing: $0[..<keep]), cut: carryCut) }
            carry.removeAll(keepingCapacity: true)
            carryCut = false
        }
        let inflated = try Inflate.inflate(archive, limit: Int.max) { piece in
            guard let base = piece.baseAddress else { return }
            var i = 0
            while i < piece.count {
                let newline = memchr(base + i, 10, piece.count - i).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) }
                let end = newline ?? piece.count
                let segment = UnsafeBufferPointer(start: base + i, count: end - i)
                if newline != nil && carry.isEmpty && !carryCut {
                    // The whole line is in this piece: no copy.
                    if segment.count > cap {
                        line(UnsafeBufferPointer(rebasing: segment[..<utf8Boundary(segment, cap)]), cut: true)
                    } else {
                        line(segment, cut: false)
                    }
                } else {
                    let room = cap - carry.count
                    if segment.count > room { carry.append(contentsOf: segment[..<room]); carryCut = true } else { carry.append(contentsOf: segment) }
                    if newline != nil { flushCarry() }
                }
                i = end + 1
            }
        }
        if !carry.isEmpty || carryCut { flushCarry() }
        totals.inflatedBytes = Int64(inflated)
        return totals
    }

    /// Parses the seven TAB-separated fields; other lines count under level "-" whole. A line cut
    /// inside its message (five TABs within the cap) still counts under its level.
    static func parse<S: LogLineSink>(
        _ l: UnsafeBufferPointer<UInt8>, cut: Bool, filter: LogLineFilter,
        key: inout [UInt8], sink: inout S
    ) -> Bool {
        guard !l.isEmpty else { return false }
        var tabs: (Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0)
        var t = 0
        for i in 0..<l.count where l[i] == 9 {
            switch t {
            case 0: tabs.0 = i;
            case 1: tabs.1 = i;
            case 2: tabs.2 = i;
            case 3: tabs.3 = i;
            case 4: tabs.4 = i;
            default: tabs.5 = i
            }
            t += 1
            if t == 6 { break }
        }
        key.removeAll(keepingCapacity: true)
        let ts: UnsafeBufferPointer<UInt8>
        let message: UnsafeBufferPointer<UInt8>
        let messageCut: Bool
        if t == 6 || (cut && t == 5) {
            let level = UnsafeBufferPointer(rebasing: l[(tabs.0 + 1)..<tabs.1])
            if filter.minRank > 0 {
                guard let r = LogLineTop.rank(level), r >= filter.minRank else { return false }
            }
            ts = UnsafeBufferPointer(rebasing: l[0..<min(tabs.0, LogLineTop.maxFieldBytes)])
            if let since = filter.since, UnsafeBufferPointer(rebasing: l[0..<tabs.0]).lexicographicallyPrecedes(since) { return false }
            key.append(contentsOf: level.prefix(LogLineTop.maxFieldBytes))
            message = t == 6 ? UnsafeBufferPointer(rebasing: l[(tabs.4 + 1)..<tabs.5]) : UnsafeBufferPointer(rebasing: l[(tabs.4 + 1)...])
            messageCut = t == 5
        } else {
            if filter.minRank > 0 || filter.since != nil { return false }
            ts = UnsafeBufferPointer(start: nil, count: 0)
            key.append(0x2d)
            message = l
            messageCut = cut
        }
        key.append(9)
        let whole = LogLineNormaliser.normalise(message, into: &key, limit: key.count + LogLineTop.maxPatternBytes)
        if !whole || messageCut {
            key.removeSubrange(utf8Boundary(key, key.count)...)
            key.append(contentsOf: ellipsis)
        }
        sink.add(key: key, timestamp: ts, message: message, cut: messageCut)
        return true
    }

    /// The largest length ≤ `n` that does not end inside a UTF-8 sequence of `bytes`.
    static func utf8Boundary<C: RandomAccessCollection>(_ bytes: C, _ n: Int) -> Int where C.Element == UInt8, C.Index == Int {
        let start = bytes.startIndex
        var k = start + n - 1
        // Back over up to three continuation bytes to the lead byte of the last sequence.
        while k >= start && k > start + n - 4 && bytes[k] & 0xC0 == 0x80 { k -= 1 }
        guard k >= start else { return 0 }
        let lead = bytes[k]
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        return k + length > start + n ? k - start : n
    }
}
