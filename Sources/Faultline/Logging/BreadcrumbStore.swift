// The last 32 breadcrumbs, held in one place: the crash handler's ring. Events copy them from there.
import CFaultlineCrash
import Foundation
import FaultlineProtocol

final class BreadcrumbStore: Sendable {
    static let shared = BreadcrumbStore()
    static let capacity = Int(FAULTLINE_BREADCRUMB_SLOTS)  // the crash core's ring
    private static let maxBytes = Int(FAULTLINE_BREADCRUMB_MAX_BYTES)  // the crash core's slot size

    /// Serialises the breadcrumb (Sentry's shape) straight into the crash ring's next slot, on the
    /// calling thread: a crash right after the call carries it. No allocation on this path. Too long for a slot: kept
    /// with a shortened message and no data rather than lost.
    func add(_ r: LogRecord) {
        Self.add(
            Breadcrumb(
                level: r.level, message: r.message, file: r.file, function: r.function, line: r.line,
                timestamp: r.timestamp, traceID: r.traceID, spanID: r.spanID), attributes: r.attributes)
    }

    /// The same for a line that has no `LogEvent` (the `Log` facade's breadcrumb-only path): the
    /// attributes in the caller's order; a key given twice keeps its last value, as a dictionary would.
    @inline(__always)
    static func add<A: Collection>(_ b: Breadcrumb, attributes: A) where A.Element == (key: String, value: AttributeValue) {
        let slot = UnsafeMutableRawBufferPointer(start: faultline_crash_reserve_breadcrumb(), count: Self.maxBytes)
        var length = Self.write(b, attributes: attributes, includeData: true, into: slot)
        if length == nil {
            var short = b
            short.message = String(b.message.utf8.prefix(600)).map { $0 + "…" } ?? String(b.message.prefix(200)) + "…"
            length = Self.write(short, attributes: attributes, includeData: false, into: slot)
        }
        faultline_crash_commit_breadcrumb(length ?? 0)
    }

    /// What a breadcrumb carries besides its attributes.
    struct Breadcrumb {
        var level: LogLevel
        var message: String
        var file: StaticString
        var function: StaticString
        var line: UInt
        var timestamp: LogTimestamp
        var traceID: String?
        var spanID: String?
    }

    /// The breadcrumb's JSON in `out`; its length, or nil if it does not fit.
    static func write<A: Collection>(
        _ r: Breadcrumb, attributes: A, includeData: Bool,
        into out: UnsafeMutableRawBufferPointer
    ) -> Int?
    where A.Element == (key: String, value: AttributeValue) {
        var w = SlotWriter(out)
        w.raw("{\"timestamp\":"); w.timestamp(r.timestamp)
        w.raw(",\"type\":\"default\",\"category\":\"log\",\"level\":"); w.raw("\""); w.raw(r.level.sentryName); w.raw("\"")
        w.raw(",\"message\":"); w.string(r.message)
        w.raw(",\"data\":{")
        if includeData {
            var i = attributes.startIndex
            while i != attributes.endIndex {
                let here = i
                attributes.formIndex(after: &i)
                if !(A.self is [String: AttributeValue].Type), Self.keyRecurs(attributes[here].key, in: attributes, from: i) { continue }
                w.string(attributes[here].key); w.raw(":")
                switch attributes[here].value {
                case .string(let s): w.string(s)
                case .int(let i): w.int(Int64(i))
                case .double(let d): w.double(d)
                case .bool(let b): w.raw(b ? "true" : "false")
                }
                w.raw(",")
            }
        }
        w.raw("\"code.function\":"); w.string(r.function)
        w.raw(",\"code.filepath\":"); w.string(r.file)
        w.raw(",\"code.lineno\":"); w.int(Int64(r.line))
        if let t = r.traceID, let s = r.spanID {
            w.raw(",\"trace_id\":"); w.string(t)
            w.raw(",\"span_id\":"); w.string(s)
        }
        w.raw("}}")
        return w.overflowed ? nil : w.count
    }

    private static func keyRecurs<A: Collection>(_ key: String, in attributes: A, from start: A.Index) -> Bool
    where A.Element == (key: String, value: AttributeValue) {
        var j = start
        while j != attributes.endIndex {
            if attributes[j].key == key { return true }  // Swift's equality, as a dictionary's keys
            attributes.formIndex(after: &j)
        }
        return false
    }

    /// Breadcrumbs for an event, oldest first (copied out of the crash ring).
    var snapshot: [JSONValue] {
        var newestFirst: [JSONValue] = []
        var buffer = [UInt8](repeating: 0, count: Self.maxBytes)
        for age in 0..<Self.capacity {
            let n = buffer.withUnsafeMutableBytes { faultline_crash_copy_breadcrumb(age, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if let v = try? JSONValue.parse(Data(buffer[..<n])) { newestFirst.append(v) }
        }
        return newestFirst.reversed()
    }
}

/// JSON into a fixed buffer (a ring slot), byte by byte; past the end it only notes the overflow.
/// Strings are escaped as JSONWriter escapes them, doubles written in its one format.
struct SlotWriter {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    private(set) var count = 0
    private(set) var overflowed = false

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        capacity = buffer.count
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        if count < capacity { base[count] = b; count += 1 } else { overflowed = true }
    }
    @inline(__always) mutating func bytes(_ p: UnsafeBufferPointer<UInt8>) {
        guard count + p.count <= capacity else { overflowed = true; return }
        var o = base + count
        for c in p { o.pointee = c; o += 1 }  // short runs: a plain loop beats a call to memmove
        count += p.count
    }
    @inline(__always) mutating func raw(_ s: StaticString) { s.withUTF8Buffer { bytes($0) } }

    mutating func string(_ s: String) {
        // Native and small strings lend their bytes without a copy of the string (no retain).
        if s.utf8.withContiguousStorageIfAvailable({ escaped($0) }) != nil { return }
        var s = s
        s.withUTF8 { escaped($0) }
    }
    mutating func string(_ s: StaticString) {
        if s.hasPointerRepresentation { s.withUTF8Buffer { escaped($0) } } else { string(s.description) }
    }
    private mutating func escaped(_ buf: UnsafeBufferPointer<UInt8>) {
        // Room for the quotes and every byte escaped (6 bytes) is checked once; only a string
        // that might not fit takes the checked path.
        guard count + 2 + 6 * buf.count <= capacity else { escapedChecked(buf); return }
        var o = base + count
        o.pointee = 0x22; o += 1
        var i = 0
        let n = buf.count
        if let src = buf.baseAddress {
            // Eight bytes at a time while none needs an escape.
            while i + 8 <= n {
                let w = UnsafeRawPointer(src + i).loadUnaligned(as: UInt64.self)
                if Self.special(w) != 0 { break }
                UnsafeMutableRawPointer(o).storeBytes(of: w, as: UInt64.self)
                o += 8
                i += 8
            }
            // The tail (most keys and messages are short) as one word too, when nothing so far
            // needed an escape (so input and output are still in step): the last eight bytes
            // overlapping what was copied, or for four to seven bytes the first and last four.
            let left = n - i
            if left > 0, i + 8 > n {
                if n >= 8 {
                    let w = UnsafeRawPointer(src + n - 8).loadUnaligned(as: UInt64.self)
                    if Self.special(w) == 0 {
                        UnsafeMutableRawPointer(o - (8 - left)).storeBytes(of: w, as: UInt64.self)
                        o += left
                        i = n
                    }
                } else if n >= 4 {
                    let first = UnsafeRawPointer(src).loadUnaligned(as: UInt32.self)
                    let last = UnsafeRawPointer(src + n - 4).loadUnaligned(as: UInt32.self)
                    if Self.special(UInt64(first) | UInt64(last) << 32) == 0 {
                        UnsafeMutableRawPointer(o).storeBytes(of: first, as: UInt32.self)
                        UnsafeMutableRawPointer(o + n - 4).storeBytes(of: last, as: UInt32.self)
                        o += n
                        i = n
                    }
                }
            }
        }
        for c in UnsafeBufferPointer(rebasing: buf[i...]) {
            if c >= 0x20 && c != 0x22 && c != 0x5C { o.pointee = c; o += 1; continue }
            switch c {
            case 0x22, 0x5C: o[0] = 0x5C; o[1] = c; o += 2
            case 0x0A: o[0] = 0x5C; o[1] = 0x6E; o += 2
            case 0x0D: o[0] = 0x5C; o[1] = 0x72; o += 2
            case 0x09: o[0] = 0x5C; o[1] = 0x74; o += 2
            default:
                let low = c & 15
                o[0] = 0x5C; o[1] = 0x75; o[2] = 0x30; o[3] = 0x30; o[4] = 0x30 + (c >> 4); o[5] = low < 10 ? 0x30 + low : 0x57 + low
                o += 6
            }
        }
        o.pointee = 0x22; o += 1
        count = o - base
    }
    /// SWAR over eight bytes: the high bit of each byte below 0x20, or equal to `"` or `\`, is set
    /// (a byte after such a one may be flagged too; a flag only sends the caller to the byte loop).
    @inline(__always)
    private static func special(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote: UInt64 = w ^ 0x2222_2222_2222_2222, backslash: UInt64 = w ^ 0x5C5C_5C5C_5C5C_5C5C
        let control: UInt64 = (w &- 0x2020_2020_2020_2020) & ~w
        let quoted: UInt64 = (quote &- ones) & ~quote
        let escaped: UInt64 = (backslash &- ones) & ~backslash
        return (control | quoted | escaped) & highs
    }
    private mutating func escapedChecked(_ buf: UnsafeBufferPointer<UInt8>) {
        byte(0x22)
        for c in buf {
            switch c {
            case 0x22, 0x5C: byte(0x5C); byte(c)
            case 0x0A: byte(0x5C); byte(0x6E)
            case 0x0D: byte(0x5C); byte(0x72)
            case 0x09: byte(0x5C); byte(0x74)
            case 0..<0x20:
                let low = c & 15
                byte(0x5C); byte(0x75); byte(0x30); byte(0x30); byte(0x30 + (c >> 4)); byte(low < 10 ? 0x30 + low : 0x57 + low)
            default: byte(c)
            }
            if overflowed { return }
        }
        byte(0x22)
    }

    mutating func int(_ v: Int64) {
        if v < 0 { byte(0x2D) }
        digits(v.magnitude, minimum: 1)
    }
    /// Decimal digits of `value`, at least `minimum` of them (zero-padded), written from the end,
    /// two at a time.
    private mutating func digits(_ value: UInt64, minimum: Int) {
        var n = 1, limit: UInt64 = 10
        while n < 20, value >= limit { n += 1; limit = limit &* 10 }
        n = max(n, minimum)
        guard count + n <= capacity else { overflowed = true; return }
        var m = value
        var o = base + count + n
        var left = n
        Self.pairs.withUTF8Buffer { pairs in
            while left >= 2 {
                let (q, r) = m.quotientAndRemainder(dividingBy: 100)
                o -= 2
                o[0] = pairs[Int(r) &* 2]; o[1] = pairs[Int(r) &* 2 &+ 1]
                m = q
                left -= 2
            }
        }
        if left == 1 { o -= 1; o.pointee = UInt8(truncatingIfNeeded: m % 10) &+ 48 }
        count += n
    }
    /// "00", "01", … "99" (a literal: no lazy global to check on every call).
    private static var pairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }
    /// JSONWriter.double's format (`DoubleText`), written in place.
    mutating func double(_ v: Double) {
        if count + DoubleText.maximumLength <= capacity {
            count += DoubleText.write(v, to: base + count)
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DoubleText.maximumLength) { text in
            let n = DoubleText.write(v, to: text.baseAddress!)
            bytes(UnsafeBufferPointer(rebasing: text[..<n]))
        }
    }
    /// Seconds since the epoch with all nine digits of the kernel's nanoseconds (no Double rounding).
    mutating func timestamp(_ t: LogTimestamp) {
        int(t.seconds)
        byte(0x2E)
        digits(UInt64(max(0, t.nanoseconds)), minimum: 9)
    }
}
