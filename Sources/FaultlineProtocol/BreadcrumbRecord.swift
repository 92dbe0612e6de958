// A log breadcrumb as the SDK's log path stores it in the crash core's ring: its fields in a
// compact binary record, not JSON. The calling thread then only copies bytes (no escaping, no
// number formatting); the JSON is rendered later, off that thread: for an event's breadcrumbs, or
// at the next launch from the crash report, where the handler writes each record as hex
// (`{"faultline_record":"fb01…"}`, report_writer.c). Rendering gives exactly the JSON the SDK
// wrote into the slot before records existed.
//
// Layout (little-endian, unaligned; strings are a UInt16 byte count and their UTF-8):
//   0      magic 0xFB (never the first byte of UTF-8 text, so a slot holding JSON is told apart)
//   1      version (1)
//   2      level (LogLevel's raw value)
//   3      flags: bit 0 set when a trace id and span id follow the file
//   4      seconds since the epoch, Int64
//   12     nanoseconds, Int32
//   16     line, UInt64
//   24     message, function, file, then (flag) trace id and span id
//          attribute count, UInt8; each attribute: key, a tag (0 string, 1 int, 2 double, 3 bool)
//          and its value (a string; Int64; a Double's bit pattern as UInt64; one byte 0 or 1)
import FoundationEssentials

public enum BreadcrumbRecord {
    public static let magic: UInt8 = 0xFB
    public static let version: UInt8 = 1
    /// The key under which the crash handler writes a record's hex in a report's breadcrumbs.
    public static let reportKey = "faultline_record"

    public enum Tag: UInt8 {
        case string = 0, int = 1, double = 2, bool = 3
    }

    /// Writes a record into a fixed buffer (a ring slot) without allocating. Past the end it only
    /// notes the overflow; the caller then writes a shorter record or none.
    public struct Encoder {
        @usableFromInline let base: UnsafeMutableRawPointer
        @usableFromInline let capacity: Int
        @usableFromInline var written = 0
        @usableFromInline var full = false
        /// Bytes written so far.
        @inlinable public var count: Int { written }
        /// Set once something did not fit; the record is then incomplete.
        @inlinable public var overflowed: Bool { full }

        @inlinable
        public init(_ buffer: UnsafeMutableRawBufferPointer) {
            base = buffer.baseAddress!
            capacity = buffer.count
        }

        /// The fixed part; `hasTrace` promises the trace id and span id after the file.
        @inlinable
        public mutating func header(level: LogLevel, seconds: Int64, nanoseconds: Int32, line: UInt, hasTrace: Bool) {
            guard capacity >= 24 else { full = true; return }
            base.storeBytes(of: BreadcrumbRecord.magic, toByteOffset: 0, as: UInt8.self)
            base.storeBytes(of: BreadcrumbRecord.version, toByteOffset: 1, as: UInt8.self)
            base.storeBytes(of: UInt8(truncatingIfNeeded: level.rawValue), toByteOffset: 2, as: UInt8.self)
            base.storeBytes(of: hasTrace ? 1 : 0, toByteOffset: 3, as: UInt8.self)
            base.storeBytes(of: seconds.littleEndian, toByteOffset: 4, as: Int64.self)
            base.storeBytes(of: nanoseconds.littleEndian, toByteOffset: 12, as: Int32.self)
            base.storeBytes(of: UInt64(line).littleEndian, toByteOffset: 16, as: UInt64.self)
            written = 24
        }

        @inlinable
        public mutating func byte(_ b: UInt8) {
            guard written < capacity else { full = true; return }
            base.storeBytes(of: b, toByteOffset: written, as: UInt8.self)
            written += 1
        }

        @inlinable
        public mutating func word(_ w: UInt64) {
            guard written + 8 <= capacity else { full = true; return }
            base.storeBytes(of: w.littleEndian, toByteOffset: written, as: UInt64.self)
            written += 8
        }

        @inlinable
        public mutating func bytes(_ p: UnsafeBufferPointer<UInt8>) {
            guard p.count <= Int(UInt16.max), written + 2 + p.count <= capacity else { full = true; return }
            base.storeBytes(of: UInt16(p.count).littleEndian, toByteOffset: written, as: UInt16.self)
            if let src = p.baseAddress, p.count > 0 { (base + written + 2).copyMemory(from: src, byteCount: p.count) }
            written += 2 + p.count
        }

        @inlinable
        public mutating func string(_ s: String) {
            // Native and small strings lend their bytes without a copy of the string.
            if s.utf8.withContiguousStorageIfAvailable({ bytes($0) }) != nil { return }
            var s = s
            s.withUTF8 { bytes($0) }
        }

        @inlinable
        public mutating func string(_ s: StaticString) { s.withUTF8Buffer { bytes($0) } }

        @inlinable
        public mutating func attributeCount(_ n: Int) {
            guard n <= Int(UInt8.max) else { full = true; return }
            byte(UInt8(n))
        }
    }

    /// The breadcrumb's JSON: the object the SDK used to serialise into the slot, byte for byte.
    /// Nil for bytes that are not a whole record of a known version.
    public static func json(_ record: UnsafeRawBufferPointer) -> [UInt8]? {
        var r = Reader(bytes: record)
        guard r.count >= 24, r.u8(at: 0) == magic, r.u8(at: 1) == version,
            let level = LogLevel(rawValue: Int(r.u8(at: 2)))
        else { return nil }
        let hasTrace = r.u8(at: 3) & 1 != 0
        let seconds = Int64(bitPattern: r.u64(at: 4))
        let nanoseconds = Int32(bitPattern: UInt32(truncatingIfNeeded: r.u64(at: 12) & 0xFFFF_FFFF))
        let line = r.u64(at: 16)
        r.offset = 24
        guard let message = r.string(), let function = r.string(), let file = r.string() else { return nil }
        var trace: (String, String)?
        if hasTrace {
            guard let t = r.string(), let s = r.string() else { return nil }
            trace = (t, s)
        }
        guard let n = r.byte() else { return nil }
        var attributes: [(key: String, value: JSONValue)] = []
        attributes.reserveCapacity(Int(n))
        for _ in 0..<n {
            guard let key = r.string(), let tag = r.byte().flatMap(Tag.init(rawValue:)) else { return nil }
            let value: JSONValue
            switch tag {
            case .string:
                guard let s = r.string() else { return nil }
                value = .string(s)
            case .int:
                guard let w = r.word() else { return nil }
                value = .int(Int64(bitPattern: w))
            case .double:
                guard let w = r.word() else { return nil }
                value = .double(Double(bitPattern: w))
            case .bool:
                guard let b = r.byte(), b <= 1 else { return nil }
                value = .bool(b == 1)
            }
            attributes.append((key, value))
        }
        guard r.offset == r.count else { return nil }

        var w = JSONWriter(capacity: record.count + 160)
        w.raw("{\"timestamp\":")
        w.int64(seconds)
        w.raw(".")
        // All nine digits of the kernel's nanoseconds (no Double rounding), zero-padded.
        var divisor: Int32 = 100_000_000
        while divisor > 0 {
            w.int64(Int64(max(0, nanoseconds) / divisor % 10))
            divisor /= 10
        }
        w.raw(",\"type\":\"default\",\"category\":\"log\",\"level\":")
        w.string(level.sentryName)
        w.raw(",\"message\":")
        w.string(message)
        w.raw(",\"data\":{")
        // A key given twice keeps its last value, as a dictionary would, at its last place.
        for (i, a) in attributes.enumerated() where !attributes[(i + 1)...].contains(where: { $0.key == a.key }) {
            w.key(a.key)
            w.value(a.value)
            w.comma()
        }
        w.raw("\"code.function\":")
        w.string(function)
        w.raw(",\"code.filepath\":")
        w.string(file)
        w.raw(",\"code.lineno\":")
        w.int64(Int64(clamping: line))
        if let (t, s) = trace {
            w.raw(",\"trace_id\":")
            w.string(t)
            w.raw(",\"span_id\":")
            w.string(s)
        }
        w.raw("}}")
        return w.bytes
    }

    /// A breadcrumb as the crash report holds it: JSON as written, or a record's hex rendered
    /// (nil when the hex or the record is damaged; that breadcrumb alone is lost).
    public static func fromReport(_ element: JSONValue) -> JSONValue? {
        guard case .object(let o) = element, o.members.count == 1, let hex = o[reportKey]?.stringValue else { return element }
        guard let bytes = HexBytes.decode(hex) else { return nil }
        guard let text = bytes.withUnsafeBytes({ json($0) }) else { return nil }
        return try? JSONValue.parse(Data(text))
    }

    /// Bounds-checked reads of a record that may be damaged.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var count: Int { bytes.count }

        func u8(at i: Int) -> UInt8 { bytes[i] }
        func u64(at i: Int) -> UInt64 {
            var v: UInt64 = 0
            for k in 0..<8 where i + k < bytes.count { v |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
            return v
        }
        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }
        mutating func word() -> UInt64? {
            guard offset + 8 <= bytes.count else { return nil }
            defer { offset += 8 }
            return u64(at: offset)
        }
        mutating func string() -> String? {
            guard offset + 2 <= bytes.count else { return nil }
            let n = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            guard offset + 2 + n <= bytes.count else { return nil }
            defer { offset += 2 + n }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 2 + n)]), as: UTF8.self)
        }
    }
}
