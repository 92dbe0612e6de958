// A schemaless JSON value: Sentry events carry open-ended fields we must keep, not drop.
import Foundation

public enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    public subscript(key: String) -> JSONValue? {
        get { if case .object(let o) = self { return o[key] } else { return nil } }
        set {
            guard case .object(var o) = self else { return }
            o[key] = newValue
            self = .object(o)
        }
    }
    public subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, index >= 0, index < a.count { return a[index] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9e18: return Int64(d)
        default: return nil
        }
    }
    public var doubleValue: Double? {
        switch self { case .int(let i): return Double(i); case .double(let d): return d; default: return nil }
    }

    /// Parses JSON bytes; throws `JSONValue.ParseError` with the decoder's reason.
    public static func parse(_ data: Data) throws(ParseError) -> JSONValue {
        do { return try JSONDecoder().decode(JSONValue.self, from: data) }
        catch { throw ParseError(reason: String(describing: error)) }
    }
    public struct ParseError: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "invalid JSON: \(reason)" }
    }

    /// Compact, key-sorted JSON (stable output for tests and hashing).
    public func serialized(pretty: Bool = false) -> Data {
        if !pretty {
            // Hand-written: JSONEncoder costs far more (and its first use costs a launch-time millisecond).
            var out = [UInt8]()
            out.reserveCapacity(256)
            write(into: &out)
            return Data(out)
        }
        let e = JSONEncoder()
        e.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return (try? e.encode(self)) ?? Data("null".utf8)
    }
    /// Compact, key-sorted output into a byte buffer.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: [110, 117, 108, 108])
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if !d.isFinite { out.append(contentsOf: [110, 117, 108, 108]) }
            else if d == d.rounded(), abs(d) < 1e15 { out.append(contentsOf: String(Int64(d)).utf8); out.append(contentsOf: [46, 48]) }
            else { out.append(contentsOf: d.description.utf8) }
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let a):
            out.append(91)
            for (i, v) in a.enumerated() { if i > 0 { out.append(44) }; v.write(into: &out) }
            out.append(93)
        case .object(let o):
            out.append(123)
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { out.append(44) }
                JSONValue.writeString(k, into: &out)
                out.append(58)
                o[k]!.write(into: &out)
            }
            out.append(125)
        }
    }

    /// Appends `s` as a JSON string literal (quotes and escapes); shared by every JSON writer.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(34)
        var s = s
        s.withUTF8 { buf in
            for c in buf {
                switch c {
                case 34: out.append(92); out.append(34)
                case 92: out.append(92); out.append(92)
                case 10: out.append(92); out.append(110)
                case 13: out.append(92); out.append(114)
                case 9: out.append(92); out.append(116)
                case 0..<32:
                    let hex = (c & 15) < 10 ? 48 + (c & 15) : 87 + (c & 15)
                    out.append(contentsOf: [92, 117, 48, 48, 48 + (c >> 4), hex])
                default: out.append(c)
                }
            }
        }
        out.append(34)
    }

    public var jsonString: String { String(decoding: serialized(), as: UTF8.self) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
                     ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral v: String) { self = .string(v) }
    public init(integerLiteral v: Int64) { self = .int(v) }
    public init(booleanLiteral v: Bool) { self = .bool(v) }
    public init(floatLiteral v: Double) { self = .double(v) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, b in b }))
    }
}
