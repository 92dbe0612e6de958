// A small JSON byte writer for the logging hot path, where JSONEncoder costs tens of microseconds.
import Foundation

struct FastJSON {
    private(set) var bytes: [UInt8] = []
    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    mutating func string(_ s: String) {
        bytes.append(0x22)
        var s = s
        s.withUTF8 { buf in
            for c in buf {
                switch c {
                case 0x22: bytes.append(0x5C); bytes.append(0x22)
                case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
                case 0x0A: bytes.append(0x5C); bytes.append(0x6E)
                case 0x0D: bytes.append(0x5C); bytes.append(0x72)
                case 0x09: bytes.append(0x5C); bytes.append(0x74)
                case 0..<0x20:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 15)]])
                default: bytes.append(c)
                }
            }
        }
        bytes.append(0x22)
    }
    mutating func string(_ s: StaticString) {
        bytes.append(0x22)
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }  // our static strings need no escaping
        bytes.append(0x22)
    }
    mutating func int(_ v: Int) { bytes.append(contentsOf: String(v).utf8) }
    mutating func double(_ v: Double) {
        if v.isFinite { bytes.append(contentsOf: "\(v)".utf8) } else { raw("null") }
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
