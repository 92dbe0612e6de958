// Lowercase hex for trace and span ids, without Foundation.
import Synchronization

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
