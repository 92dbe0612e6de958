// Little-endian reads from a core's bytes that never trust an offset: every read is checked
// against the buffer and answers nil when it would run past the end.
import FoundationEssentials

struct CoreBytes {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var count: Int { bytes.count }

    func u16(_ at: Int) -> UInt16? { unsigned(at, width: 2).map { UInt16(truncatingIfNeeded: $0) } }
    func u32(_ at: Int) -> UInt32? { unsigned(at, width: 4).map { UInt32(truncatingIfNeeded: $0) } }
    func u64(_ at: Int) -> UInt64? { unsigned(at, width: 8) }
    func i32(_ at: Int) -> Int32? { u32(at).map { Int32(bitPattern: $0) } }
    func i16(_ at: Int) -> Int16? { u16(at).map { Int16(bitPattern: $0) } }

    /// `length` bytes from `at`, or nil when they are not all there.
    func slice(_ at: Int, _ length: Int) -> ArraySlice<UInt8>? {
        guard at >= 0, length >= 0, at <= bytes.count, length <= bytes.count - at else { return nil }
        return bytes[at..<at + length]
    }

    /// A NUL-terminated string within `at..<at+limit` (the whole field when it has no NUL),
    /// invalid UTF-8 repaired: names come from the crashed process and may be anything.
    func cString(_ at: Int, limit: Int) -> String? {
        guard let field = slice(at, min(limit, max(0, bytes.count - at))) else { return nil }
        let end = field.firstIndex(of: 0) ?? field.endIndex
        return String(decoding: field[field.startIndex..<end], as: UTF8.self)
    }

    /// The byte length of a NUL-terminated string at `at` (its NUL not counted), or nil when no
    /// NUL comes within `limit` bytes.
    func cStringLength(_ at: Int, limit: Int) -> Int? {
        guard let field = slice(at, min(limit, max(0, bytes.count - at))), let nul = field.firstIndex(of: 0) else { return nil }
        return nul - field.startIndex
    }

    private func unsigned(_ at: Int, width: Int) -> UInt64? {
        guard let s = slice(at, width) else { return nil }
        var v: UInt64 = 0
        for (i, b) in s.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        return v
    }
}
