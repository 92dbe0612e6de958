// Bounds-checked little-endian reads over a dump's bytes: the only place the reader indexes them.

/// The dump's bytes with reads that check every offset and size against the file (overflow-safe)
/// and throw `MinidumpError.outOfBounds` naming what was being read.
struct MinidumpBytes {
    let bytes: [UInt8]
    /// Strings decoded so far, in bytes: many records may name the same string, so without a
    /// budget a small file could decode into gigabytes.
    private let stringBudget: StringBudget

    init(bytes: [UInt8]) {
        self.bytes = bytes
        stringBudget = StringBudget(limit: 2 * UInt64(bytes.count) + 65_536)
    }

    private final class StringBudget {
        let limit: UInt64
        var spent: UInt64 = 0
        init(limit: UInt64) { self.limit = limit }
    }

    /// Counts a string of `length` bytes (plus its length field, so empty strings count too).
    private func spend(_ length: UInt64) throws(MinidumpError) {
        stringBudget.spent += length + 4
        guard stringBudget.spent <= stringBudget.limit else {
            throw .implausibleCount(what: "string bytes", count: stringBudget.spent, limit: stringBudget.limit)
        }
    }

    var count: Int { bytes.count }

    /// Throws unless `offset ..< offset + size` lies inside the file.
    func check(_ what: String, offset: UInt64, size: UInt64) throws(MinidumpError) {
        let (end, overflow) = offset.addingReportingOverflow(size)
        guard !overflow, end <= UInt64(bytes.count) else {
            throw .outOfBounds(what: what, offset: offset, size: size, fileSize: bytes.count)
        }
    }

    func u8(_ offset: UInt64, _ what: String) throws(MinidumpError) -> UInt8 {
        try check(what, offset: offset, size: 1)
        return bytes[Int(offset)]
    }

    func u16(_ offset: UInt64, _ what: String) throws(MinidumpError) -> UInt16 {
        try check(what, offset: offset, size: 2)
        let i = Int(offset)
        return UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
    }

    func u32(_ offset: UInt64, _ what: String) throws(MinidumpError) -> UInt32 {
        try check(what, offset: offset, size: 4)
        let i = Int(offset)
        var v: UInt32 = 0
        for k in (0..<4).reversed() { v = v << 8 | UInt32(bytes[i + k]) }
        return v
    }

    func u64(_ offset: UInt64, _ what: String) throws(MinidumpError) -> UInt64 {
        try check(what, offset: offset, size: 8)
        let i = Int(offset)
        var v: UInt64 = 0
        for k in (0..<8).reversed() { v = v << 8 | UInt64(bytes[i + k]) }
        return v
    }

    func slice(_ offset: UInt64, _ size: UInt64, _ what: String) throws(MinidumpError) -> ArraySlice<UInt8> {
        try check(what, offset: offset, size: size)
        return bytes[Int(offset)..<Int(offset + size)]
    }

    /// How many entries of `entrySize` bytes a list at `offset` may hold: the count the file
    /// claims, refused when the entries would run past `available` bytes (the stream, or the file).
    func checkedCount(
        _ what: String, count: UInt64, entrySize: UInt64, offset: UInt64, available: UInt64
    ) throws(MinidumpError) -> Int {
        let limit = available / max(entrySize, 1)
        guard count <= limit else { throw .implausibleCount(what: what, count: count, limit: limit) }
        try check(what, offset: offset, size: count * entrySize)
        return Int(count)
    }

    /// An `MDString`: a 32-bit byte length, then UTF-16LE. Unpaired surrogates become U+FFFD.
    func utf16String(at rva: UInt32, _ what: String) throws(MinidumpError) -> String {
        let length = UInt64(try u32(UInt64(rva), what))
        let units = try slice(UInt64(rva) + 4, length & ~1, what)
        try spend(length)
        var code: [UInt16] = []
        code.reserveCapacity(units.count / 2)
        var i = units.startIndex
        while i + 1 < units.endIndex {
            code.append(UInt16(units[i]) | UInt16(units[i + 1]) << 8)
            i += 2
        }
        return String(decoding: code, as: UTF16.self)
    }

    /// Crashpad's `MinidumpUTF8String`: a 32-bit byte length, then UTF-8 (invalid bytes become U+FFFD).
    func utf8String(at rva: UInt32, _ what: String) throws(MinidumpError) -> String {
        let length = UInt64(try u32(UInt64(rva), what))
        let text = try slice(UInt64(rva) + 4, length, what)
        try spend(length)
        return String(decoding: text, as: UTF8.self)
    }
}
