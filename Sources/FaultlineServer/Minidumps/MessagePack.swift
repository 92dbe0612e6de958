// A MessagePack reader for what sentry-native's Crashpad backend attaches to a minidump upload
// (`__sentry-event`, `__sentry-breadcrumb1/2`: SentryNativeAttachments). The bytes are the
// client's, so nothing in them is trusted: every length is checked against the bytes left before
// anything is allocated (an element takes at least one byte, so a count larger than what remains
// is refused, not reserved), nesting is bounded, and a value ends where its bytes say. Values
// become JSONValue, as Sentry turns them into its event: strings must be UTF-8, map keys strings;
// binary and extension values, which no Sentry payload uses, become null.
import Foundation
import FaultlineProtocol

enum MessagePack {
    enum Failure: Error, Equatable, CustomStringConvertible {
        case truncated(at: Int)
        case tooDeep(at: Int)
        case invalidByte(UInt8, at: Int)
        case invalidUTF8(at: Int)
        case nonStringKey(at: Int)

        var description: String {
            switch self {
            case .truncated(let at): return "truncated value at byte \(at)"
            case .tooDeep(let at): return "nesting deeper than \(MessagePack.maxDepth) at byte \(at)"
            case .invalidByte(let b, let at): return "byte 0x\(String(b, radix: 16)) at \(at) starts no MessagePack value"
            case .invalidUTF8(let at): return "a string at byte \(at) is not UTF-8"
            case .nonStringKey(let at): return "a map key at byte \(at) is not a string"
            }
        }
    }

    /// Deeper than any event Sentry defines; bounds the reader's recursion.
    static let maxDepth = 64

    /// Exactly one value, with nothing after it.
    static func value(_ data: Data) throws(Failure) -> JSONValue {
        let all = try values(data)
        guard all.count == 1 else { throw .truncated(at: data.count) }
        return all[0]
    }

    /// The values written one after another (sentry-native appends each breadcrumb to its file).
    static func values(_ data: Data) throws(Failure) -> [JSONValue] {
        let bytes = [UInt8](data)
        var reader = Reader(bytes: bytes)
        var out: [JSONValue] = []
        while reader.position < bytes.count { out.append(try reader.read(depth: 0)) }
        return out
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        var remaining: Int { bytes.count - position }

        mutating func byte() throws(Failure) -> UInt8 {
            guard position < bytes.count else { throw .truncated(at: position) }
            defer { position += 1 }
            return bytes[position]
        }

        /// A big-endian unsigned integer of `count` bytes.
        mutating func unsigned(_ count: Int) throws(Failure) -> UInt64 {
            guard remaining >= count else { throw .truncated(at: position) }
            var v: UInt64 = 0
            for i in 0..<count { v = v << 8 | UInt64(bytes[position + i]) }
            position += count
            return v
        }

        mutating func signed(_ count: Int) throws(Failure) -> Int64 {
            let raw = try unsigned(count)
            let shift = UInt64(64 - 8 * count)
            return Int64(bitPattern: raw << shift) >> Int64(shift)
        }

        /// `count` raw bytes (a string's, a binary's, an extension's).
        mutating func take(_ count: UInt64) throws(Failure) -> ArraySlice<UInt8> {
            guard count <= UInt64(remaining) else { throw .truncated(at: position) }
            defer { position += Int(count) }
            return bytes[position..<position + Int(count)]
        }

        mutating func string(_ count: UInt64) throws(Failure) -> JSONValue {
            let start = position
            let raw = try take(count)
            guard let s = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8(at: start) }
            return .string(s)
        }

        /// An element count, refused when the bytes left could not hold that many elements.
        mutating func count(_ width: Int, perElement: Int) throws(Failure) -> Int {
            let start = position
            let n = try unsigned(width)
            guard n <= UInt64(remaining / perElement) else { throw .truncated(at: start) }
            return Int(n)
        }

        mutating func array(_ n: Int, depth: Int) throws(Failure) -> JSONValue {
            var a: [JSONValue] = []
            a.reserveCapacity(n)
            for _ in 0..<n { a.append(try read(depth: depth + 1)) }
            return .array(a)
        }

        mutating func map(_ n: Int, depth: Int) throws(Failure) -> JSONValue {
            var o: [String: JSONValue] = [:]
            o.reserveCapacity(n)
            for _ in 0..<n {
                let keyAt = position
                guard case .string(let key) = try read(depth: depth + 1) else { throw .nonStringKey(at: keyAt) }
                o[key] = try read(depth: depth + 1)
            }
            return .object(o)
        }

        mutating func read(depth: Int) throws(Failure) -> JSONValue {
            let at = position
            guard depth < MessagePack.maxDepth else { throw .tooDeep(at: at) }
            let b = try byte()
            switch b {
            case 0x00...0x7f: return .int(Int64(b))
            case 0x80...0x8f: return try map(Int(b & 0x0f), depth: depth)
            case 0x90...0x9f: return try array(Int(b & 0x0f), depth: depth)
            case 0xa0...0xbf: return try string(UInt64(b & 0x1f))
            case 0xc0: return .null
            case 0xc2: return .bool(false)
            case 0xc3: return .bool(true)
            case 0xc4, 0xc5, 0xc6: _ = try take(try unsigned(1 << Int(b - 0xc4))); return .null
            case 0xc7, 0xc8, 0xc9: let n = try unsigned(1 << Int(b - 0xc7)); _ = try take(n &+ 1); return .null
            case 0xca: return .double(Double(Float(bitPattern: UInt32(try unsigned(4)))))
            case 0xcb: return .double(Double(bitPattern: try unsigned(8)))
            case 0xcc, 0xcd, 0xce: return .int(Int64(try unsigned(1 << Int(b - 0xcc))))
            case 0xcf:
                let v = try unsigned(8)
                return v <= UInt64(Int64.max) ? .int(Int64(v)) : .double(Double(v))
            case 0xd0, 0xd1, 0xd2, 0xd3: return .int(try signed(1 << Int(b - 0xd0)))
            case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: _ = try take(UInt64(1 + (1 << Int(b - 0xd4)))); return .null
            case 0xd9, 0xda, 0xdb: return try string(try unsigned(1 << Int(b - 0xd9)))
            case 0xdc, 0xdd: return try array(try count(b == 0xdc ? 2 : 4, perElement: 1), depth: depth)
            case 0xde, 0xdf: return try map(try count(b == 0xde ? 2 : 4, perElement: 2), depth: depth)
            case 0xe0...0xff: return .int(Int64(Int8(bitPattern: b)))
            default: throw .invalidByte(b, at: at)  // 0xc1: never used
            }
        }
    }
}
