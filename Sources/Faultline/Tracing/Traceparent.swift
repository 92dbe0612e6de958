// The W3C `traceparent` header: strict parsing (every invalid form restarts the trace) and formatting.
import Foundation

/// A parsed `traceparent` (W3C Trace Context). Parsing follows the spec's processing model:
/// version 00 must be exactly 55 characters of lowercase hex fields; `ff` is forbidden; all-zero
/// ids are invalid; a future version is read by its first four fields and may carry more after a
/// `-`. Leading and trailing spaces and tabs are ignored (the W3C test suite keeps such values).
public struct Traceparent: Sendable, Hashable {
    public var traceID: TraceID
    public var parentID: SpanID
    public var flags: TraceFlags

    public init(traceID: TraceID, parentID: SpanID, flags: TraceFlags) {
        self.traceID = traceID; self.parentID = parentID; self.flags = flags
    }

    /// Nil for every malformed value: the caller then starts a fresh trace.
    public init?(parsing raw: String) {
        let t = raw.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
        let u = Array(t.reversed())
        guard u.count >= 55, u[2] == 0x2D, u[35] == 0x2D, u[52] == 0x2D,
            let version = HexIDs.parse(u[0..<2]), version != 0xFF,
            let high = HexIDs.parse(u[3..<19]), let low = HexIDs.parse(u[19..<35]),
            let traceID = TraceID(high: high, low: low),
            let parent = HexIDs.parse(u[36..<52]), let parentID = SpanID(parent),
            let flags = HexIDs.parse(u[53..<55])
        else { return nil }
        if version == 0 {
            guard u.count == 55 else { return nil }  // nothing may follow version 00's flags
        } else if u.count > 55 {
            guard u[55] == 0x2D else { return nil }  // a future version's extra fields follow a '-'
        }
        self.init(traceID: traceID, parentID: parentID, flags: TraceFlags(rawValue: UInt8(flags)))
    }

    /// `00-<trace id>-<parent id>-<flags>`: always version 00, unknown flag bits cleared.
    public var header: String { Self.format(traceID, parentID, flags) }

    static func format(_ traceID: TraceID, _ spanID: SpanID, _ flags: TraceFlags) -> String {
        String(unsafeUninitializedCapacity: 55) { p in
            p[0] = 0x30; p[1] = 0x30; p[2] = 0x2D
            HexIDs.write(traceID.high, into: p, at: 3)
            HexIDs.write(traceID.low, into: p, at: 19)
            p[35] = 0x2D
            HexIDs.write(spanID.value, into: p, at: 36)
            p[52] = 0x2D
            let f = flags.outgoing.rawValue
            p[53] = HexIDs.digits[Int(f >> 4)]; p[54] = HexIDs.digits[Int(f & 0xF)]
            return 55
        }
    }
}
