// A bounded top-K count of line patterns for `logs top`: Space-Saving (Metwally, Agrawal and
// El Abbadi, "Efficient computation of frequent and top-k elements in data streams", 2005) with a
// fixed number of counters, so memory does not grow with the number of distinct lines.
//
// While fewer distinct patterns than counters have been seen, every count is exact. After that, a
// new pattern takes over the counter with the smallest count c and starts at c + 1 with error c:
// a counter's `count` is then an upper bound of its pattern's true count and `count - error` a
// lower bound, and any pattern seen more than `minimum` times holds a counter. `LogLineTop`
// turns the bounds into exact counts with a second pass over the archives (docs/SERVER.md,
// "Line patterns").
import Foundation

struct LogPatternSketch: LogLineSink {
    struct Counter {
        /// Level, TAB, pattern (at most `LogLineTop.maxPatternBytes` of pattern).
        var key: [UInt8]
        /// An upper bound of the pattern's true count; exact while `error` is 0.
        var count: Int64
        var error: Int64
        var first: [UInt8]
        var last: [UInt8]
        var example: [UInt8]
    }

    let capacity: Int
    private(set) var counters: [Counter] = []
    private var slots: [[UInt8]: Int] = [:]
    /// A min-heap of counter indices by count, built when the counters are all taken, and each
    /// counter's place in it: finding the counter to take over is O(1), an increment O(log n).
    private var heap: [Int] = []
    private var place: [Int] = []
    /// True once a pattern took over another's counter: counts may be over by up to `error`.
    private(set) var evicted = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots.reserveCapacity(self.capacity)
    }

    /// The smallest count held. Once `evicted`, a pattern without a counter was seen at most this often.
    var minimum: Int64 { heap.isEmpty ? 0 : counters[heap[0]].count }

    /// Counts one line. `key` is copied only when it takes a counter.
    mutating func add(key: [UInt8], timestamp: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>, cut: Bool) {
        if let c = slots[key] {
            counters[c].count += 1
            Self.see(&counters[c], timestamp: timestamp, message: message, cut: cut)
            if !heap.isEmpty { siftDown(place[c]) }
            return
        }
        let fresh = Counter(
            key: key, count: 1, error: 0, first: Array(timestamp), last: Array(timestamp),
            example: LogLineTop.example(message, cut: cut))
        if counters.count < capacity {
            slots[key] = counters.count
            counters.append(fresh)
            if counters.count == capacity { buildHeap() }
            return
        }
        let c = heap[0]
        let floor = counters[c].count
        slots.removeValue(forKey: counters[c].key)
        counters[c] = fresh
        counters[c].count = floor + 1
        counters[c].error = floor
        slots[key] = c
        evicted = true
        siftDown(0)
    }

    /// Keeps the earliest timestamp with its message as the example (of lines as early, the
    /// smallest example: the same whichever thread or pass saw them first), and the latest
    /// timestamp. Timestamps are ISO 8601 UTC text, so they compare as bytes. A line without one
    /// (not in the file log's format) gives the example only if there is none yet.
    static func see(_ c: inout Counter, timestamp ts: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>, cut: Bool) {
        guard !ts.isEmpty else {
            if c.example.isEmpty { c.example = LogLineTop.example(message, cut: cut) }
            return
        }
        if c.first.isEmpty || ts.lexicographicallyPrecedes(c.first) {
            c.first = Array(ts); c.example = LogLineTop.example(message, cut: cut)
        } else if ts.elementsEqual(c.first) {
            let example = LogLineTop.example(message, cut: cut)
            if example.lexicographicallyPrecedes(c.example) { c.example = example }
        }
        if c.last.lexicographicallyPrecedes(ts) { c.last = Array(ts) }
    }

    /// `other`'s first and last seen and example into `c`, by the rules of `see`.
    static func combine(_ c: inout Counter, _ other: Counter) {
        if !other.first.isEmpty,
            c.first.isEmpty || other.first.lexicographicallyPrecedes(c.first)
                || (other.first == c.first && other.example.lexicographicallyPrecedes(c.example))
        {
            c.first = other.first; c.example = other.example
        } else if c.example.isEmpty {
            c.example = other.example
        }
        if c.last.lexicographicallyPrecedes(other.last) { c.last = other.last }
    }

    private mutating func buildHeap() {
        heap = Array(counters.indices)
        place = Array(counters.indices)
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < heap.count && counters[heap[l]].count < counters[heap[smallest]].count { smallest = l }
            if r < heap.count && counters[heap[r]].count < counters[heap[smallest]].count { smallest = r }
            if smallest == i { return }
            heap.swapAt(i, smallest)
            place[heap[i]] = i
            place[heap[smallest]] = smallest
            i = smallest
        }
    }
}

/// Several workers' sketches as one: per pattern, the sum of its counts where it holds a counter
/// and, where it does not, that sketch's `minimum` for the upper bound (0 if that sketch never
/// evicted: it saw every pattern it was given) and 0 for the lower bound.
struct LogPatternBounds {
    struct Entry {
        /// Key, first and last seen, example; its `count` and `error` are one sketch's, use the bounds.
        var counter: LogPatternSketch.Counter
        var upper: Int64
        var lower: Int64
    }
    var entries: [Entry] = []
    /// Some sketch evicted: the bounds differ, and a pattern may be missing altogether.
    var evicted = false
    /// A pattern with no entry was seen at most this often.
    var missingAtMost: Int64 = 0

    init(_ sketches: [LogPatternSketch]) {
        evicted = sketches.contains { $0.evicted }
        let floors = sketches.map { $0.evicted ? $0.minimum : 0 }
        missingAtMost = floors.reduce(0, +)
        var index: [[UInt8]: Int] = [:]
        for (s, sketch) in sketches.enumerated() {
            for c in sketch.counters {
                if let at = index[c.key] {
                    entries[at].upper += c.count - floors[s]  // the floor was added for "absent" below
                    entries[at].lower += c.count - c.error
                    LogPatternSketch.combine(&entries[at].counter, c)
                } else {
                    index[c.key] = entries.count
                    // Absent from every other sketch so far and to come: start from the sum of their floors.
                    entries.append(Entry(counter: c, upper: c.count + missingAtMost - floors[s], lower: c.count - c.error))
                }
            }
        }
    }
}

/// The second pass: exact counts (and first/last seen, example) of a fixed set of candidate
/// patterns; lines of any other pattern are skipped. Its memory is the candidates'.
struct LogPatternTally: LogLineSink {
    private var slots: [[UInt8]: Int] = [:]
    private(set) var counters: [LogPatternSketch.Counter] = []

    mutating func adopt(_ c: LogPatternSketch.Counter) {
        slots[c.key] = counters.count
        counters.append(LogPatternSketch.Counter(key: c.key, count: 0, error: 0, first: [], last: [], example: []))
    }

    mutating func add(key: [UInt8], timestamp: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>, cut: Bool) {
        guard let c = slots[key] else { return }
        counters[c].count += 1
        LogPatternSketch.see(&counters[c], timestamp: timestamp, message: message, cut: cut)
    }

    /// Several threads' tallies of the same candidates as one: each candidate and its count.
    static func merged(_ tallies: [Self]) -> [(LogPatternSketch.Counter, Int64)] {
        guard var out = tallies.first?.counters else { return [] }
        for t in tallies.dropFirst() {
            for (i, c) in t.counters.enumerated() {
                out[i].count += c.count
                LogPatternSketch.combine(&out[i], c)
            }
        }
        return out.map { ($0, $0.count) }
    }
}
