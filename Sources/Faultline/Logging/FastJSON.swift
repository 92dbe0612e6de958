// A small JSON byte writer for the logging hot path, where JSONEncoder costs tens of microseconds.
import FaultlineProtocol
import Foundation

struct FastJSON {
    private(set) var bytes: [UInt8] = []
    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    mutating func string(_ s: String) { JSONValue.writeString(s, into: &bytes) }
    mutating func string(_ s: StaticString) {
        // #fileID and #function values and our own literals: escape only if they need it.
        let clean = s.withUTF8Buffer { !$0.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } }
        if !clean { string(s.description); return }
        bytes.append(0x22)
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(0x22)
    }
    mutating func int(_ v: Int) {
        if v < 0 { bytes.append(0x2D) }
        var m = v.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat { d[n] = UInt8(48 + m % 10); m /= 10; n += 1 } while m > 0
            for i in stride(from: n - 1, through: 0, by: -1) { bytes.append(d[i]) }
        }
    }
    mutating func double(_ v: Double) {
        guard v.isFinite else { raw("null"); return }
        if v == v.rounded(), abs(v) < 1e15 { int(Int(v)); raw(".0"); return }
        bytes.append(contentsOf: v.description.utf8)
    }
    mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }
    mutating func key(_ k: StaticString) { string(k); bytes.append(0x3A) }
    mutating func key(_ k: String) { string(k); bytes.append(0x3A) }
    mutating func comma() { bytes.append(0x2C) }

    mutating func attribute(_ v: AttributeValue) {
        switch v {
        case .string(let s): string(s)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .bool(let b): bool(b)
        }
    }
}
