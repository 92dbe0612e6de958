// Envelope framing for the ingest hot path: the same rules as FaultlineProtocol's Envelope.parse
// (lengths checked against the bytes present, one event at most), with headers read by FastJSON.
import Foundation
import FaultlineProtocol

enum EnvelopeFraming {
    static func parse(_ data: Data, maxHeaderBytes: Int = 64 * 1024) throws(Envelope.ParseError) -> Envelope {
        let result: Result<Envelope, Envelope.ParseError> = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var pos = 0
            func line() -> Range<Int>? {
                guard pos < bytes.count else { return nil }
                let start = pos
                while pos < bytes.count && bytes[pos] != 0x0A { pos += 1 }
                let r = start..<pos
                if pos < bytes.count { pos += 1 }
                return r
            }
            func json(_ r: Range<Int>) -> Result<JSONValue, FastJSON.Failure> {
                do { return .success(try FastJSON.parse(Data(UnsafeBufferPointer(rebasing: bytes[r])))) }
                catch { return .failure(error) }
            }
            guard let h = line(), !h.isEmpty else { return .failure(.empty) }
            guard h.count <= maxHeaderBytes else { return .failure(.badHeader("header longer than \(maxHeaderBytes) bytes")) }
            let header: JSONValue
            switch json(h) {
            case .failure(let e): return .failure(.badHeader(e.description))
            case .success(let v): header = v
            }
            guard case .object = header else { return .failure(.badHeader("not an object")) }
            var items: [Envelope.Item] = []
            var events = 0
            while pos < bytes.count {
                let index = items.count
                guard let ih = line() else { break }
                if ih.isEmpty { continue }
                guard ih.count <= maxHeaderBytes else { return .failure(.badItemHeader(index: index, reason: "longer than \(maxHeaderBytes) bytes")) }
                let itemHeader: JSONValue
                switch json(ih) {
                case .failure(let e): return .failure(.badItemHeader(index: index, reason: e.description))
                case .success(let v): itemHeader = v
                }
                guard case .object = itemHeader else { return .failure(.badItemHeader(index: index, reason: "not an object")) }
                let payload: Range<Int>
                if let lenValue = itemHeader["length"] {
                    guard let len = lenValue.int64Value, len >= 0 else {
                        return .failure(.badItemHeader(index: index, reason: "length is not a non-negative integer"))
                    }
                    let available = bytes.count - pos
                    guard Int64(available) >= len else { return .failure(.truncatedItem(index: index, declared: Int(clamping: len), available: available)) }
                    payload = pos..<(pos + Int(len))
                    pos += Int(len)
                    if pos < bytes.count {
                        guard bytes[pos] == 0x0A else { return .failure(.missingNewline(index: index)) }
                        pos += 1
                    }
                } else {
                    payload = line() ?? pos..<pos
                }
                let item = Envelope.Item(header: itemHeader, payload: Data(UnsafeBufferPointer(rebasing: bytes[payload])))
                if item.type == "event" || item.type == "transaction" { events += 1 }
                if events > 1 { return .failure(.tooManyEvents) }
                items.append(item)
            }
            return .success(Envelope(header: header, items: items))
        }
        return try result.get()
    }
}
