// W3C span id (8 bytes).
import Synchronization

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
