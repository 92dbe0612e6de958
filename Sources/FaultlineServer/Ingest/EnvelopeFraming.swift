// Envelope framing for the ingest hot path, as a push parser: bytes arrive in pieces (straight
// from the inflater) and every limit is checked as items are framed — the item count at each
// item header, a kept item's size against its declared `length` before any byte of it is kept
// (or as a length-less payload grows), the total kept. Items of types ingest skips
// (attachments, unknown types) are counted and stepped over, never buffered. The rules are those
// of FaultlineProtocol's Envelope.parse (lengths checked against the bytes present, one event at
// most); headers are read by FastJSON.
import Foundation
import FaultlineProtocol

enum EnvelopeFraming {
    struct Reader {
        let limits: IngestLimits
        let maxHeaderBytes: Int

        private enum State {
            case envelopeHeader
            case itemHeader
            /// `declared` nil: the payload runs to the next newline.
            case payload(header: JSONValue, declared: Int?, keep: Bool)
            /// After a payload with a `length`: a newline or the end.
            case separator
        }
        private var state = State.envelopeHeader
        private var line: [UInt8] = []
        private var payload: [UInt8] = []
        private var received = 0
        private var itemCount = 0
        private var events = 0
        private var keptBytes = 0
        private(set) var header: JSONValue = [:]
        private(set) var items: [Envelope.Item] = []

        init(limits: IngestLimits, maxHeaderBytes: Int = 64 * 1024) {
            self.limits = limits
            self.maxHeaderBytes = maxHeaderBytes
        }

        static func malformed(_ e: Envelope.ParseError) -> IngestError { .malformed("malformed envelope: \(e)") }

        mutating func feed(_ buf: UnsafeBufferPointer<UInt8>) throws(IngestError) {
            var i = 0
            while i < buf.count {
                switch state {
                case .envelopeHeader, .itemHeader:
                    let nl = Self.newline(in: buf, from: i)
                    let end = nl ?? buf.count
                    if line.count + (end - i) > maxHeaderBytes {
                        if case .envelopeHeader = state { throw Self.malformed(.badHeader("header longer than \(maxHeaderBytes) bytes")) }
                        throw Self.malformed(.badItemHeader(index: itemCount, reason: "longer than \(maxHeaderBytes) bytes"))
                    }
                    line.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<end]))
                    i = end
                    if nl != nil { i += 1; try lineEnded() }
                case .payload(let header, let declared, let keep):
                    if let declared {
                        let n = min(declared - received, buf.count - i)
                        if keep { payload.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<(i + n)])) }
                        received += n
                        i += n
                        if received == declared { try itemEnded(header, keep: keep); state = .separator }
                    } else {
                        let nl = Self.newline(in: buf, from: i)
                        let end = nl ?? buf.count
                        received += end - i
                        if keep {
                            try checkKept(type: header["type"]?.stringValue ?? "", size: received)
                            payload.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<end]))
                        }
                        i = end
                        if nl != nil { i += 1; try itemEnded(header, keep: keep); state = .itemHeader }
                    }
                case .separator:
                    guard buf[i] == 0x0A else { throw Self.malformed(.missingNewline(index: itemCount - 1)) }
                    i += 1
                    state = .itemHeader
                }
            }
        }

        /// The body has ended: completes a last line or payload without a newline.
        mutating func finish() throws(IngestError) -> Envelope {
            switch state {
            case .envelopeHeader:
                guard !line.isEmpty else { throw Self.malformed(.empty) }
                try lineEnded()
            case .itemHeader:
                if !line.isEmpty { try lineEnded() }
            default: break
            }
            if case .payload(let header, let declared, let keep) = state {
                if let declared, received < declared {
                    throw Self.malformed(.truncatedItem(index: itemCount - 1, declared: declared, available: received))
                }
                try itemEnded(header, keep: keep)
            }
            return Envelope(header: header, items: items)
        }

        private static func newline(in buf: UnsafeBufferPointer<UInt8>, from i: Int) -> Int? {
            guard i < buf.count, let base = buf.baseAddress, let hit = memchr(base + i, 0x0A, buf.count - i) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
        }

        private mutating func lineEnded() throws(IngestError) {
            defer { line.removeAll(keepingCapacity: true) }
            if case .envelopeHeader = state {
                guard !line.isEmpty else { throw Self.malformed(.empty) }
                let h: JSONValue
                do { h = try FastJSON.parse(Data(line)) } catch { throw Self.malformed(.badHeader(error.description)) }
                guard case .object = h else { throw Self.malformed(.badHeader("not an object")) }
                header = h
                state = .itemHeader
                return
            }
            if line.isEmpty { return }  // blank lines between items
            let index = itemCount
            itemCount += 1
            guard itemCount <= limits.maxItems else {
                throw .tooLarge("envelope has more than \(limits.maxItems) items; at most \(limits.maxItems) allowed")
            }
            let h: JSONValue
            do { h = try FastJSON.parse(Data(line)) } catch { throw Self.malformed(.badItemHeader(index: index, reason: error.description)) }
            guard case .object = h else { throw Self.malformed(.badItemHeader(index: index, reason: "not an object")) }
            let type = h["type"]?.stringValue ?? ""
            guard !type.isEmpty else { throw .malformed("item \(index): header has no type") }
            if type == "event" || type == "transaction" { events += 1 }
            if events > 1 { throw Self.malformed(.tooManyEvents) }
            var declared: Int?
            if let lenValue = h["length"] {
                guard let len = lenValue.int64Value, len >= 0 else {
                    throw Self.malformed(.badItemHeader(index: index, reason: "length is not a non-negative integer"))
                }
                guard len <= Int64(limits.maxDecompressedBytes) else {
                    throw .tooLarge("item \(index) (\(type)) declares length \(len); the decompressed body may be at most \(limits.maxDecompressedBytes) bytes")
                }
                declared = Int(len)
            }
            let keep = limits.cap(forItemType: type) != nil
            if keep, let declared { try checkKept(type: type, size: declared) }
            received = 0
            payload.removeAll(keepingCapacity: true)
            state = .payload(header: h, declared: declared, keep: keep)
            if declared == 0 { try itemEnded(h, keep: keep); state = .separator }
        }

        /// A kept item of `size` bytes (declared, or received so far) must fit its type's cap and
        /// the envelope's total.
        private func checkKept(type: String, size: Int) throws(IngestError) {
            let cap = limits.cap(forItemType: type) ?? 0
            guard size <= cap else {
                let what = type == "event" ? "event" : type
                throw .tooLarge("item \(itemCount - 1) (\(what)) is \(size) bytes; at most \(cap) allowed")
            }
            guard keptBytes + size <= limits.maxKeptBytes else {
                throw .tooLarge("the envelope's kept items exceed \(limits.maxKeptBytes) bytes; at most \(limits.maxKeptBytes) allowed")
            }
        }

        private mutating func itemEnded(_ h: JSONValue, keep: Bool) throws(IngestError) {
            guard keep else { return }
            keptBytes += payload.count
            items.append(Envelope.Item(header: h, payload: Data(payload)))
            payload.removeAll(keepingCapacity: false)
        }
    }

    /// Frames a whole body at once (tests, fuzzing, identity-encoded bodies).
    static func parse(_ data: Data, limits: IngestLimits = IngestLimits()) throws(IngestError) -> Envelope {
        var reader = Reader(limits: limits)
        let r: Result<Void, IngestError> = data.withUnsafeBytes { raw in
            do throws(IngestError) { try reader.feed(raw.bindMemory(to: UInt8.self)); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
        return try reader.finish()
    }
}
