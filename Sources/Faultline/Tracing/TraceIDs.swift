// W3C trace identities: a 16-byte trace id, an 8-byte span id, the flags byte, and their generator.
import Synchronization

/// A W3C trace id: 16 bytes, never all zero, written as 32 lowercase hex digits.
public struct TraceID: Sendable, Hashable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64
    public init?(high: UInt64, low: UInt64) {
        guard high != 0 || low != 0 else { return nil }
        self.high = high; self.low = low
    }
    /// 32 lowercase hex digits, all zero refused (W3C).
    public init?(hex: Substring) {
        guard hex.utf8.count == 32, let h = HexIDs.parse(hex.utf8.prefix(16)), let l = HexIDs.parse(hex.utf8.dropFirst(16)) else { return nil }
        self.init(high: h, low: l)
    }
    /// A fresh random id (the whole id is random, so the W3C random-trace-id flag holds).
    public static func random() -> TraceID {
        while true { if let t = TraceID(high: IDGenerator.next(), low: IDGenerator.next()) { return t } }
    }
    public var hex: String { HexIDs.format(high, low) }
    public var description: String { hex }
}

/// A W3C parent id / Sentry span id: 8 bytes, never zero, 16 lowercase hex digits.
public struct SpanID: Sendable, Hashable, CustomStringConvertible {
    public let value: UInt64
    public init?(_ value: UInt64) {
        guard value != 0 else { return nil }
        self.value = value
    }
    public init?(hex: Substring) {
        guard hex.utf8.count == 16, let v = HexIDs.parse(hex.utf8[...]) else { return nil }
        self.init(v)
    }
    public static func random() -> SpanID {
        while true { if let s = SpanID(IDGenerator.next()) { return s } }
    }
    public var hex: String { HexIDs.format(value) }
    public var description: String { hex }
}

/// The `trace-flags` byte. Bits are tested one by one; unknown bits are never sent (W3C).
public struct TraceFlags: Sendable, Hashable, OptionSet {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The caller may have recorded this trace: we record it too.
    public static let sampled = TraceFlags(rawValue: 0x01)
    /// The trace id's right-most 7 bytes are random (W3C level 2); copied when continuing.
    public static let randomTraceID = TraceFlags(rawValue: 0x02)
    /// What we send: the two bits we know.
    var outgoing: TraceFlags { intersection([.sampled, .randomTraceID]) }
}

/// Span and trace ids come from SplitMix64 over one atomic counter seeded from the system's
/// random source: lock-free and a few nanoseconds, where the system generator is a syscall.
/// Ids need to be unique and unpredictable enough to sample on, not secret.
enum IDGenerator {
    private static let state = Atomic<UInt64>(UInt64.random(in: 1...UInt64.max))
    static func next() -> UInt64 {
        var z = state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [0, 1), for the sampling decision.
    static func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}

/// Lowercase hex without Foundation (this runs on every span start and `traceparent()`).
enum HexIDs {
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Only `0-9a-f`: upper case is invalid in `traceparent` (W3C HEXDIGLC).
    static func parse<C: Collection<UInt8>>(_ bytes: C) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var v: UInt64 = 0
        for b in bytes {
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            default: return nil
            }
            v = v << 4 | UInt64(d)
        }
        return v
    }

    static func write(_ v: UInt64, into p: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for i in 0..<16 { p[offset + i] = digits[Int((v >> (60 - 4 * UInt64(i))) & 0xF)] }
    }

    static func format(_ values: UInt64...) -> String {
        String(unsafeUninitializedCapacity: values.count * 16) { p in
            for (k, v) in values.enumerated() { write(v, into: p, at: k * 16) }
            return values.count * 16
        }
    }
}
