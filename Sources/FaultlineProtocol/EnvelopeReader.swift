// The one Sentry envelope reader, as a push parser: bytes arrive in pieces (straight from an
// inflater on the server, whole from a file in the SDK) and every limit is checked as items are
// framed — the item count at each item header, a kept item's size against its declared `length`
// before any byte of it is kept (or as a length-less payload grows), the total kept. Items of
// types the caller does not keep are counted and stepped over, never buffered.
//
// The wire rules: a JSON object header line; then items, each a JSON object header line with a
// non-empty `type` and a payload of `length` bytes followed by a newline (or the end), or without
// `length` a payload running to the next newline; blank lines between items are skipped; lengths
// are trusted only against the bytes present; one `event` or `transaction` item at most.
import FoundationEssentials
import Glibc

public struct EnvelopeReader {
    /// What a reader accepts. The defaults accept any envelope and keep every item.
    public struct Limits: Sendable {
        /// The envelope header and each item header line.
        public var maxHeaderBytes = 64 * 1024
        /// Items per envelope, counted as they are framed (skipped items count too).
        public var maxItems = Int.max
        /// The largest `length` an item may declare, kept or not.
        public var maxDeclaredBytes = Int.max
        /// All kept payloads together.
        public var maxKeptBytes = Int.max
        /// The item types kept, each with its payload cap; other types are stepped over. nil keeps
        /// every type, uncapped.
        public var keptItemCaps: [String: Int]?
        /// Kept types whose item, when over its cap or the kept total, is stepped over instead of
        /// refusing the envelope (an attachment too large for this server must not lose the crash
        /// it came with): it stays in the envelope as its header with an empty payload and
        /// `droppedSizeKey` naming its size.
        public var droppedWhenTooLarge: Set<String> = []

        public init() {}
        public static let unlimited = Limits()

        /// Largest payload kept for an item type; nil for types that are skipped.
        public func cap(forItemType type: String) -> Int? {
            guard let keptItemCaps else { return Int.max }
            return keptItemCaps[type]
        }
    }

    public let limits: Limits

    /// The header member an item stepped over for its size carries (`droppedWhenTooLarge`).
    public static let droppedSizeKey = "faultline_dropped_size"

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
    private var header: JSONValue = [:]
    private var items: [Envelope.Item] = []

    public init(limits: Limits = .unlimited) { self.limits = limits }

    /// Frames the next piece of the body.
    public mutating func feed(_ buf: UnsafeBufferPointer<UInt8>) throws(Envelope.ParseError) {
        var i = 0
        while i < buf.count {
            switch state {
            case .envelopeHeader, .itemHeader:
                let nl = Self.newline(in: buf, from: i)
                let end = nl ?? buf.count
                if line.count + (end - i) > limits.maxHeaderBytes {
                    if case .envelopeHeader = state { throw .badHeader("header longer than \(limits.maxHeaderBytes) bytes") }
                    throw .badItemHeader(index: itemCount, reason: "longer than \(limits.maxHeaderBytes) bytes")
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
                    if received == declared { itemEnded(header, keep: keep); state = .separator }
                } else {
                    let nl = Self.newline(in: buf, from: i)
                    let end = nl ?? buf.count
                    received += end - i
                    var keep = keep, header = header
                    if keep {
                        let type = header["type"]?.stringValue ?? ""
                        if limits.droppedWhenTooLarge.contains(type) && !fits(type: type, size: received) {
                            (keep, header) = (false, Self.markedDropped(header))
                            payload.removeAll(keepingCapacity: false)
                            state = .payload(header: header, declared: nil, keep: false)
                        } else {
                            try checkKept(type: type, size: received)
                            payload.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<end]))
                        }
                    }
                    i = end
                    if nl != nil { i += 1; itemEnded(header, keep: keep); state = .itemHeader }
                }
            case .separator:
                guard buf[i] == 0x0A else { throw .missingNewline(index: itemCount - 1) }
                i += 1
                state = .itemHeader
            }
        }
    }

    /// The body has ended: completes a last line or payload without a newline.
    public mutating func finish() throws(Envelope.ParseError) -> Envelope {
        switch state {
        case .envelopeHeader:
            guard !line.isEmpty else { throw .empty }
            try lineEnded()
        case .itemHeader:
            if !line.isEmpty { try lineEnded() }
        default: break
        }
        if case .payload(let header, let declared, let keep) = state {
            if let declared, received < declared {
                throw .truncatedItem(index: itemCount - 1, declared: declared, available: received)
            }
            itemEnded(header, keep: keep)
        }
        return Envelope(header: header, items: items)
    }

    /// Frames a whole body at once.
    public static func read(_ data: Data, limits: Limits = .unlimited) throws(Envelope.ParseError) -> Envelope {
        var reader = EnvelopeReader(limits: limits)
        let r: Result<Void, Envelope.ParseError> = data.withUnsafeBytes { raw in
            do throws(Envelope.ParseError) { try reader.feed(raw.bindMemory(to: UInt8.self)); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
        return try reader.finish()
    }

    private static func newline(in buf: UnsafeBufferPointer<UInt8>, from i: Int) -> Int? {
        guard i < buf.count, let base = buf.baseAddress, let hit = memchr(base + i, 0x0A, buf.count - i) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit))
    }

    private mutating func lineEnded() throws(Envelope.ParseError) {
        defer { line.removeAll(keepingCapacity: true) }
        if case .envelopeHeader = state {
            guard !line.isEmpty else { throw .empty }
            let h: JSONValue
            do { h = try JSONParser.parse(Data(line)) } catch { throw .badHeader(error.description) }
            guard case .object = h else { throw .badHeader("not an object") }
            header = h
            state = .itemHeader
            return
        }
        if line.isEmpty { return }  // blank lines between items
        let index = itemCount
        itemCount += 1
        guard itemCount <= limits.maxItems else { throw .tooManyItems(limit: limits.maxItems) }
        let h: JSONValue
        do { h = try JSONParser.parse(Data(line)) } catch { throw .badItemHeader(index: index, reason: error.description) }
        guard case .object = h else { throw .badItemHeader(index: index, reason: "not an object") }
        let type = h["type"]?.stringValue ?? ""
        guard !type.isEmpty else { throw .missingType(index: index) }
        if type == "event" || type == "transaction" { events += 1 }
        if events > 1 { throw .tooManyEvents }
        var declared: Int?
        if let lenValue = h["length"] {
            guard let len = lenValue.int64Value, len >= 0 else {
                throw .badItemHeader(index: index, reason: "length is not a non-negative integer")
            }
            guard len <= Int64(limits.maxDeclaredBytes) else {
                throw .declaredTooLarge(index: index, type: type, declared: len, limit: limits.maxDeclaredBytes)
            }
            declared = Int(len)
        }
        var keep = limits.cap(forItemType: type) != nil
        var h2 = h
        if keep, let declared {
            if limits.droppedWhenTooLarge.contains(type) && !fits(type: type, size: declared) {
                (keep, h2) = (false, Self.markedDropped(h))
            } else {
                try checkKept(type: type, size: declared)
            }
        }
        received = 0
        payload.removeAll(keepingCapacity: true)
        state = .payload(header: h2, declared: declared, keep: keep)
        if declared == 0 { itemEnded(h2, keep: keep); state = .separator }
    }

    /// Whether a kept item of `size` bytes fits its type's cap and the envelope's total.
    private func fits(type: String, size: Int) -> Bool {
        size <= (limits.cap(forItemType: type) ?? 0) && keptBytes + size <= limits.maxKeptBytes
    }

    /// An item header marked as stepped over for its size (the size is filled in at its end).
    private static func markedDropped(_ h: JSONValue) -> JSONValue {
        var marked = h
        marked[droppedSizeKey] = 0
        return marked
    }

    /// A kept item of `size` bytes (declared, or received so far) must fit its type's cap and the
    /// envelope's total.
    private func checkKept(type: String, size: Int) throws(Envelope.ParseError) {
        let cap = limits.cap(forItemType: type) ?? 0
        guard size <= cap else { throw .itemTooLarge(index: itemCount - 1, type: type, size: size, limit: cap) }
        guard keptBytes + size <= limits.maxKeptBytes else { throw .keptTooLarge(limit: limits.maxKeptBytes) }
    }

    private mutating func itemEnded(_ h: JSONValue, keep: Bool) {
        if !keep, h[Self.droppedSizeKey] != nil {
            var marked = h
            marked[Self.droppedSizeKey] = .int(Int64(received))
            items.append(Envelope.Item(header: marked, payload: Data()))
            return
        }
        guard keep else { return }
        keptBytes += payload.count
        items.append(Envelope.Item(header: h, payload: Data(payload)))
        payload.removeAll(keepingCapacity: false)
    }
}
