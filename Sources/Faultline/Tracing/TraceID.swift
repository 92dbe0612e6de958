// The W3C trace id: 16 bytes, never all zero, 32 lowercase hex digits.
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
