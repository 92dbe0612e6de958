// W3C trace flags (the sampled bit).
import Synchronization

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
