// The index's file format: the tables the builder fills and the bytes `DWARFIndex` maps.
//
// Layout (little-endian, every table 8-byte aligned, all offsets from the start of the file):
//   header (512 bytes): magic "FLSYMIDX", format version, flags, total size, checksum of the
//   payload, build-id, then a table of (offset, count) for each array in `IndexArray` order.
// Strings are NUL-terminated in one blob and referenced by offset; "none" is `IndexTables.none`.
// A frame chain is: segment (innermost scope for an address range) → scope → parent scopes;
// each inlined scope carries its call site, which is the location shown for its caller.
import FaultlineProtocol
import FaultlineFiles
#if canImport(Glibc)
    import Glibc
#endif

/// The arrays of an index, in file order, with their element sizes.
enum IndexArray: Int, CaseIterable {
    case strings  // UInt8: NUL-terminated strings
    case files  // UInt32: string offset of each file's full path
    case cuLow, cuHigh  // UInt64: compile-unit address ranges, sorted by low
    case cuOfRange  // UInt32: compile unit of each range
    case cuRowStart, cuRowEnd  // UInt32: each compile unit's slice of the row tables
    case rowAddress  // UInt64: line rows, sorted by address within each unit
    case rowFile  // UInt32: file index, or `none` for an end-of-sequence row
    case rowLine, rowColumn  // UInt32
    case scopeName, scopeParent, scopeCallFile, scopeCallLine, scopeCallColumn, scopeFlags  // UInt32
    case segmentStart  // UInt64: start of each address range with one innermost scope
    case segmentScope  // UInt32: that scope, or `none` for a gap
    case symbolAddress, symbolSize  // UInt64: ELF symbols, sorted, one per address
    case symbolName  // UInt32
    case symbolFile  // UInt32: file index of the STT_FILE before a local symbol, or none

    var elementSize: Int {
        switch self {
        case .strings: return 1
        case .cuLow, .cuHigh, .rowAddress, .segmentStart, .symbolAddress, .symbolSize: return 8
        default: return 4
        }
    }
}

/// The tables as Swift arrays, produced by the builder and written by `serialized()`.
struct IndexTables {
    static let none = UInt32.max
    static let scopeIsInlined: UInt32 = 1

    var strings: [UInt8] = [0]
    var files: [UInt32] = []
    var cuLow: [UInt64] = [], cuHigh: [UInt64] = [], cuOfRange: [UInt32] = []
    var cuRowStart: [UInt32] = [], cuRowEnd: [UInt32] = []
    var rowAddress: [UInt64] = [], rowFile: [UInt32] = [], rowLine: [UInt32] = [], rowColumn: [UInt32] = []
    var scopeName: [UInt32] = [], scopeParent: [UInt32] = [], scopeCallFile: [UInt32] = []
    var scopeCallLine: [UInt32] = [], scopeCallColumn: [UInt32] = [], scopeFlags: [UInt32] = []
    var segmentStart: [UInt64] = [], segmentScope: [UInt32] = []
    var symbolAddress: [UInt64] = [], symbolSize: [UInt64] = [], symbolName: [UInt32] = [], symbolFile: [UInt32] = []
    var hasDWARF = false
    /// Split-DWARF units whose .dwo was not found (their DW_AT_dwo_name). Not stored: an index
    /// that lacks units is never persisted.
    var missingSplitUnits: [String] = []
    /// How a partial build read its units (`DebugInfoView`). Not stored: tests ask it.
    enum ViewUse { case notTried, used, refused }
    var debugInfoView = ViewUse.notTried
    /// The ELF's first load address, so a warm start needs no ELF file at all.
    var firstLoadAddress: UInt64 = 0

    /// Where each array lies in the file layout: (element count, byte count, offset) in
    /// `IndexArray` order, and the total size.
    func layout() -> (tables: [(count: Int, bytes: Int, offset: Int)], total: Int) {
        var out: [(count: Int, bytes: Int, offset: Int)] = []
        var total = IndexFormat.headerSize
        func add<T>(_ a: [T]) {
            let bytes = a.count * MemoryLayout<T>.stride
            out.append((a.count, bytes, total))
            total = (total + bytes + 7) & ~7
        }
        add(strings); add(files)
        add(cuLow); add(cuHigh); add(cuOfRange); add(cuRowStart); add(cuRowEnd)
        add(rowAddress); add(rowFile); add(rowLine); add(rowColumn)
        add(scopeName); add(scopeParent); add(scopeCallFile); add(scopeCallLine)
        add(scopeCallColumn); add(scopeFlags)
        add(segmentStart); add(segmentScope)
        add(symbolAddress); add(symbolSize); add(symbolName); add(symbolFile)
        precondition(out.count == IndexArray.allCases.count)
        return (out, total)
    }

    /// Calls `body` with each array's bytes, in `IndexArray` order.
    func forEachArray(_ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        func each<T>(_ a: [T]) -> Bool { a.withUnsafeBytes { body($0) } }
        return each(strings) && each(files)
            && each(cuLow) && each(cuHigh) && each(cuOfRange) && each(cuRowStart) && each(cuRowEnd)
            && each(rowAddress) && each(rowFile) && each(rowLine) && each(rowColumn)
            && each(scopeName) && each(scopeParent) && each(scopeCallFile) && each(scopeCallLine)
            && each(scopeCallColumn) && each(scopeFlags)
            && each(segmentStart) && each(segmentScope)
            && each(symbolAddress) && each(symbolSize) && each(symbolName) && each(symbolFile)
    }

    /// Writes the index in its file format (the bytes `DWARFIndex` maps) to `fd`, streamed from
    /// the arrays: no second copy of the tables in memory. The checksum is summed on the way and
    /// written into the header last.
    func write(to fd: Int32, buildID: BuildID?) -> Bool {
        let (tables, total) = layout()
        let header = UnsafeMutableRawPointer.allocate(byteCount: IndexFormat.headerSize, alignment: 16)
        defer { header.deallocate() }
        header.initializeMemory(as: UInt8.self, repeating: 0, count: IndexFormat.headerSize)
        IndexFormat.magic.withUnsafeBytes { header.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        header.storeBytes(of: IndexFormat.version.littleEndian, toByteOffset: 8, as: UInt32.self)
        header.storeBytes(of: (hasDWARF ? IndexFormat.flagHasDWARF : 0).littleEndian, toByteOffset: 12, as: UInt32.self)
        header.storeBytes(of: UInt64(total).littleEndian, toByteOffset: 16, as: UInt64.self)
        header.storeBytes(of: firstLoadAddress.littleEndian, toByteOffset: IndexFormat.loadAddressOffset, as: UInt64.self)
        let id = Array((buildID?.bytes ?? []).prefix(IndexFormat.maxBuildIDLength))
        header.storeBytes(of: UInt32(id.count).littleEndian, toByteOffset: 32, as: UInt32.self)
        header.storeBytes(of: UInt32(tables.count).littleEndian, toByteOffset: 36, as: UInt32.self)
        for (i, byte) in id.enumerated() { header.storeBytes(of: byte, toByteOffset: 40 + i, as: UInt8.self) }
        for (i, table) in tables.enumerated() {
            header.storeBytes(of: UInt64(table.offset).littleEndian, toByteOffset: IndexFormat.tableOffset + i * 16, as: UInt64.self)
            header.storeBytes(of: UInt64(table.count).littleEndian, toByteOffset: IndexFormat.tableOffset + i * 16 + 8, as: UInt64.self)
        }
        guard IndexFormat.writeAll(fd, UnsafeRawBufferPointer(start: header, count: IndexFormat.headerSize)) else { return false }
        var sum = IndexChecksum(payloadBytes: total - IndexFormat.headerSize)
        let zeros = [UInt8](repeating: 0, count: 8)
        var written = IndexFormat.headerSize
        let ok = forEachArray { bytes in
            sum.add(bytes)
            guard IndexFormat.writeAll(fd, bytes) else { return false }
            written += bytes.count
            let pad = ((written + 7) & ~7) - written
            guard pad > 0 else { return true }
            return zeros.withUnsafeBytes { z in
                let padding = UnsafeRawBufferPointer(rebasing: z[..<pad])
                sum.add(padding)
                written += pad
                return IndexFormat.writeAll(fd, padding)
            }
        }
        guard ok, written == total else { return false }
        var checksum = sum.finish().littleEndian
        return pwrite(fd, &checksum, 8, 24) == 8
    }
}

enum IndexFormat {
    static let magic: [UInt8] = Array("FLSYMIDX".utf8)
    /// Bump whenever the layout or the meaning of a table changes: old files are then rebuilt.
    // 5: DWARF 5 files in directory entry 0 are no longer joined to DW_AT_comp_dir again.
    // 6: unit ranges are non-overlapping segments (the first unit in the file wins an address
    //    several claim); out-of-line functions inside C++ abstract instances are indexed.
    // 7: file paths follow llvm's rule for DW_AT_comp_dir and directory entries in DWARF 4 and 5
    //    (`LineTableFilePath`): a relative comp_dir is no longer joined twice.
    static let version: UInt32 = 7
    static let flagHasDWARF: UInt32 = 1
    static let headerSize = 512
    static let maxBuildIDLength = 64
    static let tableOffset = 40 + maxBuildIDLength
    static let loadAddressOffset = headerSize - 8

    /// A fast 64-bit checksum (multiply-xor over 8-byte words). It detects torn writes and bit rot,
    /// not tampering; the cache directory belongs to the user running the symbolicator.
    static func checksum(_ buf: UnsafeRawBufferPointer) -> UInt64 {
        var sum = IndexChecksum(payloadBytes: buf.count)
        sum.add(buf)
        return sum.finish()
    }

    /// Writes all of `bytes` (FaultlineFiles' `writeAll`), at most 256 KiB per write: the page
    /// cache keeps a file in folios as large as the writes that filled it (ext4), and a fault in
    /// a mapping of it maps the whole folio. A warm start with a few addresses maps the index and
    /// reads a few pages of it; written in megabyte writes, each of those pages would map a
    /// megabyte folio. Smaller writes cost time on large lookups (docs/SYMBOLICATION.md, "The
    /// persisted index").
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        FaultlineFiles.writeAll(fd, bytes, maxPerWrite: 1 << 18)
    }
}

/// `IndexFormat.checksum` summed piece by piece (the writer streams the tables). Words alternate
/// between two lanes (independent multiplies hide the latency); bytes after the last whole word
/// go into the first lane.
struct IndexChecksum {
    private var h: UInt64
    private var h2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private var words = 0  // whole words summed so far
    private var partial: UInt64 = 0  // bytes of an unfinished word, little-endian
    private var partialCount = 0

    init(payloadBytes: Int) { h = 0x9E37_79B9_7F4A_7C15 ^ UInt64(payloadBytes) }

    @inline(__always) private mutating func word(_ w: UInt64) {
        if words & 1 == 0 { h = (h ^ w) &* 0x0000_0100_0000_01B3 } else { h2 = (h2 ^ w) &* 0x9E37_79B9_7F4A_7C15 }
        words += 1
    }

    mutating func add(_ buf: UnsafeRawBufferPointer) {
        var i = 0
        while partialCount > 0 && i < buf.count {
            partial |= UInt64(buf[i]) << (8 * UInt64(partialCount)); partialCount += 1; i += 1
            if partialCount == 8 { word(partial); partial = 0; partialCount = 0 }
        }
        if words & 1 == 1 && i + 8 <= buf.count { word(buf.loadUnaligned(fromByteOffset: i, as: UInt64.self)); i += 8 }
        // Pairs: the loaded-index check of every warm start runs here.
        var a = h, b = h2, pairs = 0
        while i + 16 <= buf.count {
            a = (a ^ buf.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x0000_0100_0000_01B3
            b = (b ^ buf.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            i += 16; pairs += 1
        }
        h = a; h2 = b; words += 2 * pairs
        if i + 8 <= buf.count { word(buf.loadUnaligned(fromByteOffset: i, as: UInt64.self)); i += 8 }
        while i < buf.count { partial |= UInt64(buf[i]) << (8 * UInt64(partialCount)); partialCount += 1; i += 1 }
    }

    func finish() -> UInt64 {
        var h = h
        for k in 0..<partialCount { h = (h ^ ((partial >> (8 * UInt64(k))) & 0xff)) &* 0x0000_0100_0000_01B3 }
        return h ^ (h2 &* 31) ^ (h >> 29)
    }
}

/// Why a stored index was not used.
enum IndexLoadError: Error, CustomStringConvertible {
    case tooSmall, badMagic, wrongVersion(UInt32), wrongSize, wrongBuildID, badChecksum, badTable(String)
    var description: String {
        switch self {
        case .tooSmall: return "index file too small"
        case .badMagic: return "not an index file"
        case .wrongVersion(let v): return "index format version \(v), expected \(IndexFormat.version)"
        case .wrongSize: return "index size does not match its header"
        case .wrongBuildID: return "index belongs to another build-id"
        case .badChecksum: return "index checksum mismatch"
        case .badTable(let why): return "index table invalid: \(why)"
        }
    }
}
