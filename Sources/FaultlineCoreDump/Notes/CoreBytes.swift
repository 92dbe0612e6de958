// Little-endian reads from a core's bytes that never trust an offset: every read is checked
// against the view and answers nil when it would run past its end. A view shares its bytes
// (a note's descriptor is a view into the notes, not a copy).
import FoundationEssentials

struct CoreBytes {
    private let bytes: [UInt8]
    private let start: Int
    let count: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        start = 0
        count = bytes.count
    }

    private init(bytes: [UInt8], start: Int, count: Int) {
        self.bytes = bytes
        self.start = start
        self.count = count
    }

    func u16(_ at: Int) -> UInt16? { unsigned(at, width: 2).map { UInt16(truncatingIfNeeded: $0) } }
    func u32(_ at: Int) -> UInt32? { unsigned(at, width: 4).map { UInt32(truncatingIfNeeded: $0) } }
    func u64(_ at: Int) -> UInt64? { unsigned(at, width: 8) }
    func i32(_ at: Int) -> Int32? { u32(at).map { Int32(bitPattern: $0) } }
    func i16(_ at: Int) -> Int16? { u16(at).map { Int16(bitPattern: $0) } }

    private func fits(_ at: Int, _ length: Int) -> Bool { at >= 0 && length >= 0 && at <= count && length <= count - at }

    /// The `length` bytes from `at` as a view of their own, or nil when they are not all there.
    func view(_ at: Int, _ length: Int) -> CoreBytes? {
        fits(at, length) ? CoreBytes(bytes: bytes, start: start + at, count: length) : nil
    }

    /// The byte length of a NUL-terminated string at `at` (its NUL not counted), or nil when no
    /// NUL comes within `limit` bytes.
    func cStringLength(_ at: Int, limit: Int) -> Int? {
        guard at >= 0, at <= count else { return nil }
        let end = start + at + min(max(0, limit), count - at)
        guard let nul = bytes[(start + at)..<end].firstIndex(of: 0) else { return nil }
        return nul - (start + at)
    }

    /// A NUL-terminated string within `at..<at+limit` (the whole field when it has no NUL),
    /// invalid UTF-8 repaired: names come from the crashed process and may be anything.
    func cString(_ at: Int, limit: Int) -> String? {
        guard at >= 0, at <= count else { return nil }
        let field = bytes[(start + at)..<(start + at + min(max(0, limit), count - at))]
        let end = field.firstIndex(of: 0) ?? field.endIndex
        return String(decoding: field[field.startIndex..<end], as: UTF8.self)
    }

    private func unsigned(_ at: Int, width: Int) -> UInt64? {
        guard fits(at, width) else { return nil }
        return bytes.withUnsafeBytes { raw in
            switch width {
            case 2: return UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start + at, as: UInt16.self)))
            case 4: return UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start + at, as: UInt32.self)))
            default: return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start + at, as: UInt64.self))
            }
        }
    }
}
