// The one JSON writer: the SDK's logging hot path, every serialised JSONValue (events, envelopes,
// the server's API responses and content keys) and the CLI's pretty output write through it.
//
// Number format, decided once: an integer is written as digits; a finite double always reads
// back as a double — a whole number below 1e15 as "1.0", any other value in Swift's shortest
// round-trip form ("0.1", "1e+20"); NaN and infinities, which JSON cannot carry, as null. So
// parse → write → parse returns the same JSONValue, and the same value is the same bytes
// wherever it is written.

/// Appends JSON to a byte buffer. Objects written from a `JSONValue` have their keys sorted, so the
/// output is deterministic (usable for content keys and golden tests).
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Appends `s` verbatim: for punctuation and literals the caller knows are valid JSON.
    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    public mutating func string(_ s: String) { Self.writeString(s, into: &bytes) }
    public mutating func string(_ s: StaticString) {
        // #fileID and #function values and our own literals: escape only if they need it.
        let clean = s.withUTF8Buffer { !$0.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } }
        if !clean { string(s.description); return }
        bytes.append(0x22)
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(0x22)
    }
    public mutating func int(_ v: Int) { int64(Int64(v)) }
    public mutating func int64(_ v: Int64) {
        if v < 0 { bytes.append(0x2D) }
        var m = v.magnitude
        // Digits into a fixed tuple: no String allocation per number.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { d in
            var n = 0
            repeat { d[n] = UInt8(48 + m % 10); m /= 10; n += 1 } while m > 0
            for i in stride(from: n - 1, through: 0, by: -1) { bytes.append(d[i]) }
        }
    }
    /// The one double format (see the file comment; written by `DoubleText`).
    public mutating func double(_ v: Double) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DoubleText.maximumLength) { text in
            let n = DoubleText.write(v, to: text.baseAddress!)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<n]))
        }
    }
    public mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }
    public mutating func null() { raw("null") }
    public mutating func key(_ k: StaticString) { string(k); bytes.append(0x3A) }
    public mutating func key(_ k: String) { string(k); bytes.append(0x3A) }
    public mutating func comma() { bytes.append(0x2C) }

    /// Compact, key-sorted.
    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int64(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let a):
            bytes.append(0x5B)
            for (i, e) in a.enumerated() { if i > 0 { comma() }; value(e) }
            bytes.append(0x5D)
        case .object(let o):
            bytes.append(0x7B)
            for (i, m) in o.sortedByKey.enumerated() {
                if i > 0 { comma() }
                key(m.key)
                value(m.value)
            }
            bytes.append(0x7D)
        }
    }

    /// Key-sorted, two spaces per level, `"key" : value` (the layout JSONEncoder's pretty printing
    /// used, so people's scripts see the same shape); empty containers stay on one line.
    public mutating func prettyValue(_ v: JSONValue, level: Int = 0) {
        func newline(_ level: Int) {
            bytes.append(0x0A)
            bytes.append(contentsOf: repeatElement(0x20, count: 2 * level))
        }
        switch v {
        case .array(let a) where !a.isEmpty:
            bytes.append(0x5B)
            for (i, e) in a.enumerated() {
                if i > 0 { comma() }
                newline(level + 1)
                prettyValue(e, level: level + 1)
            }
            newline(level)
            bytes.append(0x5D)
        case .object(let o) where !o.isEmpty:
            bytes.append(0x7B)
            for (i, m) in o.sortedByKey.enumerated() {
                if i > 0 { comma() }
                newline(level + 1)
                string(m.key)
                raw(" : ")
                prettyValue(m.value, level: level + 1)
            }
            newline(level)
            bytes.append(0x7D)
        default:
            value(v)
        }
    }

    /// Appends `s` as a JSON string literal (quotes and escapes; `/` is not escaped).
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { buf in
            for c in buf {
                switch c {
                case 0x22: out.append(0x5C); out.append(0x22)
                case 0x5C: out.append(0x5C); out.append(0x5C)
                case 0x0A: out.append(0x5C); out.append(0x6E)
                case 0x0D: out.append(0x5C); out.append(0x72)
                case 0x09: out.append(0x5C); out.append(0x74)
                case 0..<0x20:
                    let low = c & 15
                    out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, 0x30 + (c >> 4), low < 10 ? 0x30 + low : 0x57 + low])
                default: out.append(c)
                }
            }
        }
        out.append(0x22)
    }
}
