// Sentry envelopes: a JSON header line, then items, each a JSON header line and a payload.
import FoundationEssentials

public struct Envelope: Sendable {
    public struct Item: Sendable {
        public var header: JSONValue
        public var payload: Data
        public var type: String { header["type"]?.stringValue ?? "" }
        public init(header: JSONValue, payload: Data) { self.header = header; self.payload = payload }
        public init(type: String, payload: Data, extra: [String: JSONValue] = [:]) {
            var h = extra
            h["type"] = .string(type)
            h["length"] = .int(Int64(payload.count))
            self.header = .object(h)
            self.payload = payload
        }
    }

    public var header: JSONValue
    public var items: [Item]

    public init(header: JSONValue, items: [Item]) { self.header = header; self.items = items }

    public var eventID: String? { header["event_id"]?.stringValue }

    /// Why an envelope was refused. The `isOverLimit` cases broke one of the reader's limits; the
    /// others are malformed.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case empty
        case badHeader(String)
        case badItemHeader(index: Int, reason: String)
        case missingType(index: Int)
        case truncatedItem(index: Int, declared: Int, available: Int)
        case missingNewline(index: Int)
        case tooManyEvents
        case tooManyItems(limit: Int)
        case declaredTooLarge(index: Int, type: String, declared: Int64, limit: Int)
        case itemTooLarge(index: Int, type: String, size: Int, limit: Int)
        case keptTooLarge(limit: Int)

        public var isOverLimit: Bool {
            switch self {
            case .tooManyItems, .declaredTooLarge, .itemTooLarge, .keptTooLarge: return true
            default: return false
            }
        }

        public var description: String {
            switch self {
            case .empty: return "empty envelope"
            case .badHeader(let r): return "envelope header is not a JSON object: \(r)"
            case .badItemHeader(let i, let r): return "item \(i): header is not a JSON object: \(r)"
            case .missingType(let i): return "item \(i): header has no type"
            case .truncatedItem(let i, let d, let a): return "item \(i): length \(d) but only \(a) bytes follow"
            case .missingNewline(let i): return "item \(i): payload is not followed by a newline"
            case .tooManyEvents: return "an envelope may carry at most one event item"
            case .tooManyItems(let l): return "envelope has more than \(l) items; at most \(l) allowed"
            case .declaredTooLarge(let i, let t, let d, let l):
                return "item \(i) (\(t)) declares length \(d); the decompressed body may be at most \(l) bytes"
            case .itemTooLarge(let i, let t, let s, let l): return "item \(i) (\(t)) is \(s) bytes; at most \(l) allowed"
            case .keptTooLarge(let l): return "the envelope's kept items exceed \(l) bytes; at most \(l) allowed"
            }
        }
    }

    /// Reads the wire format (`EnvelopeReader`'s rules) from a whole body.
    public static func parse(_ data: Data, limits: EnvelopeReader.Limits = .unlimited) throws(ParseError) -> Envelope {
        try EnvelopeReader.read(data, limits: limits)
    }

    /// Serialises with explicit lengths on every item.
    public func serialized() -> Data {
        var out = Data()
        out.append(header.serialized())
        out.append(0x0A)
        for item in items {
            var h = item.header
            h["length"] = .int(Int64(item.payload.count))
            out.append(h.serialized())
            out.append(0x0A)
            out.append(item.payload)
            out.append(0x0A)
        }
        return out
    }
}
