// Sentry envelopes: a JSON header line, then items, each a JSON header line and a payload.
import Foundation

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

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case empty
        case badHeader(String)
        case badItemHeader(index: Int, reason: String)
        case truncatedItem(index: Int, declared: Int, available: Int)
        case missingNewline(index: Int)
        case tooManyEvents

        public var description: String {
            switch self {
            case .empty: return "empty envelope"
            case .badHeader(let r): return "envelope header is not a JSON object: \(r)"
            case .badItemHeader(let i, let r): return "item \(i): header is not a JSON object: \(r)"
            case .truncatedItem(let i, let d, let a): return "item \(i): length \(d) but only \(a) bytes follow"
            case .missingNewline(let i): return "item \(i): payload is not followed by a newline"
            case .tooManyEvents: return "an envelope may carry at most one event item"
            }
        }
    }

    /// Parses the wire format. Lengths are trusted only after checking them against the bytes present.
    public static func parse(_ data: Data, maxHeaderBytes: Int = 64 * 1024) throws(ParseError) -> Envelope {
        let bytes = [UInt8](data)
        var pos = 0
        func line() -> ArraySlice<UInt8>? {
            guard pos < bytes.count else { return nil }
            let start = pos
            while pos < bytes.count && bytes[pos] != 0x0A { pos += 1 }
            let l = bytes[start..<pos]
            if pos < bytes.count { pos += 1 }
            return l
        }
        guard let headerLine = line(), !headerLine.isEmpty else { throw .empty }
        guard headerLine.count <= maxHeaderBytes else { throw .badHeader("header longer than \(maxHeaderBytes) bytes") }
        let header: JSONValue
        do { header = try JSONValue.parse(Data(headerLine)) } catch { throw .badHeader(error.reason) }
        guard case .object = header else { throw .badHeader("not an object") }

        var items: [Item] = []
        var events = 0
        while pos < bytes.count {
            let index = items.count
            guard let h = line() else { break }
            if h.isEmpty { continue }  // tolerate trailing blank lines
            guard h.count <= maxHeaderBytes else { throw .badItemHeader(index: index, reason: "longer than \(maxHeaderBytes) bytes") }
            let ih: JSONValue
            do { ih = try JSONValue.parse(Data(h)) } catch { throw .badItemHeader(index: index, reason: error.reason) }
            guard case .object = ih else { throw .badItemHeader(index: index, reason: "not an object") }
            let payload: ArraySlice<UInt8>
            if let lenValue = ih["length"] {
                guard let len = lenValue.int64Value, len >= 0 else {
                    throw .badItemHeader(index: index, reason: "length is not a non-negative integer")
                }
                let available = bytes.count - pos
                guard Int64(available) >= len else { throw .truncatedItem(index: index, declared: Int(len), available: available) }
                payload = bytes[pos..<(pos + Int(len))]
                pos += Int(len)
                if pos < bytes.count {
                    guard bytes[pos] == 0x0A else { throw .missingNewline(index: index) }
                    pos += 1
                }
            } else {
                payload = line() ?? []
            }
            let item = Item(header: ih, payload: Data(payload))
            if item.type == "event" || item.type == "transaction" { events += 1 }
            if events > 1 { throw .tooManyEvents }
            items.append(item)
        }
        return Envelope(header: header, items: items)
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
