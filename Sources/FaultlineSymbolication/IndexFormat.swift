// The index's file format: the tables the builder fills and the bytes `DWARFIndex` maps.
//
// Layout (little-endian, every table 8-byte aligned, all offsets from the start of the file):
//   header (512 bytes): magic "FLSYMIDX", format version, flags, total size, checksum of the
//   payload, build-id, then a table of (offset, count) for each array in `IndexArray` order.
// Strings are NUL-terminated in one blob and referenced by offset; "none" is `IndexTables.none`.
// A frame chain is: segment (innermost scope for an address range) → scope → parent scopes;
// each inlined scope carries its call site, which is the location shown for its caller.
import FaultlineProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The arrays of an index, in file order, with their element sizes.
enum IndexArray: Int, CaseIterable {
    case strings            // UInt8: NUL-terminated strings
    case files              // UInt32: string offset of each file's full path
    case cuLow, cuHigh      // UInt64: compile-unit address ranges, sorted by low
    case cuOfRange          // UInt32: compile unit of each range
    case cuRowStart, cuRowEnd // UInt32: each compile unit's slice of the row tables
    case rowAddress         // UInt64: line rows, sorted by address within each unit
    case rowFile            // UInt32: file index, or `none` for an end-of-sequence row
    case rowLine, rowColumn // UInt32
    case scopeName, scopeParent, scopeCallFile, scopeCallLine, scopeCallColumn, scopeFlags // UInt32
    case segmentStart       // UInt64: start of each address range with one innermost scope
    case segmentScope       // UInt32: that scope, or `none` for a gap
    case symbolAddress, symbolSize // UInt64: ELF symbols, sorted, one per address
    case symbolName         // UInt32
    case symbolFile         // UInt32: file index of the STT_FILE before a local symbol, or none

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
    /// The ELF's first load address, so a warm start needs no ELF file at all.
    var firstLoadAddress: UInt64 = 0

    /// Writes the index in its file format (the same bytes `DWARFIndex` maps) into one
    /// allocation the caller owns (16-byte aligned): one copy of the tables, no intermediate array.
    /// Each array is emptied once copied, so the tables and the blob never coexist in full.
    /// - Parameter checksum: false leaves the header's checksum 0 (an index used in memory only;
    ///   `IndexFormat.writeChecksum` fills it in before the bytes are stored).
    mutating func serialize(buildID: BuildID?, checksum: Bool = true) -> (memory: UnsafeMutableRawPointer, length: Int) {
        var sizes: [(Int, Int)] = []   // (element count, byte count) per array, in IndexArray order
        func add<T>(_ a: [T]) { sizes.append((a.count, a.count * MemoryLayout<T>.stride)) }
        add(strings); add(files)
        add(cuLow); add(cuHigh); add(cuOfRange); add(cuRowStart); add(cuRowEnd)
        add(rowAddress); add(rowFile); add(rowLine); add(rowColumn)
        add(scopeName); add(scopeParent); add(scopeCallFile); add(scopeCallLine)
        add(scopeCallColumn); add(scopeFlags)
        add(segmentStart); add(segmentScope)
        add(symbolAddress); add(symbolSize); add(symbolName); add(symbolFile)
        precondition(sizes.count == IndexArray.allCases.count)
        var offsets: [Int] = []
        var total = IndexFormat.headerSize
        for (_, bytes) in sizes { offsets.append(total); total = (total + bytes + 7) & ~7 }
        let b = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 16)
        // Zero only the header and the padding: touching the whole blob up front would hold it
        // and the tables in memory at once.
        b.initializeMemory(as: UInt8.self, repeating: 0, count: IndexFormat.headerSize)
        var slot = 0
        func put<T>(_ a: inout [T]) {
            let start = b + offsets[slot]
            let end = slot + 1 < offsets.count ? offsets[slot + 1] : total
            a.withUnsafeBytes { if let p = $0.baseAddress { start.copyMemory(from: p, byteCount: $0.count) } }
            let used = offsets[slot] + sizes[slot].1
            if end > used { (b + used).initializeMemory(as: UInt8.self, repeating: 0, count: end - used) }
            a = []
            slot += 1
        }
        put(&strings); put(&files)
        put(&cuLow); put(&cuHigh); put(&cuOfRange); put(&cuRowStart); put(&cuRowEnd)
        put(&rowAddress); put(&rowFile); put(&rowLine); put(&rowColumn)
        put(&scopeName); put(&scopeParent); put(&scopeCallFile); put(&scopeCallLine)
        put(&scopeCallColumn); put(&scopeFlags)
        put(&segmentStart); put(&segmentScope)
        put(&symbolAddress); put(&symbolSize); put(&symbolName); put(&symbolFile)
        IndexFormat.magic.withUnsafeBytes { b.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        b.storeBytes(of: IndexFormat.version.littleEndian, toByteOffset: 8, as: UInt32.self)
        b.storeBytes(of: (hasDWARF ? IndexFormat.flagHasDWARF : 0).littleEndian, toByteOffset: 12, as: UInt32.self)
        b.storeBytes(of: UInt64(total).littleEndian, toByteOffset: 16, as: UInt64.self)
        b.storeBytes(of: firstLoadAddress.littleEndian, toByteOffset: IndexFormat.loadAddressOffset, as: UInt64.self)
        let id = Array((buildID?.bytes ?? []).prefix(IndexFormat.maxBuildIDLength))
        b.storeBytes(of: UInt32(id.count).littleEndian, toByteOffset: 32, as: UInt32.self)
        b.storeBytes(of: UInt32(sizes.count).littleEndian, toByteOffset: 36, as: UInt32.self)
        for (i, byte) in id.enumerated() { b.storeBytes(of: byte, toByteOffset: 40 + i, as: UInt8.self) }
        for (i, (count, _)) in sizes.enumerated() {
            b.storeBytes(of: UInt64(offsets[i]).littleEndian, toByteOffset: IndexFormat.tableOffset + i * 16, as: UInt64.self)
            b.storeBytes(of: UInt64(count).littleEndian, toByteOffset: IndexFormat.tableOffset + i * 16 + 8, as: UInt64.self)
        }
        if checksum { IndexFormat.writeChecksum(b, length: total) }
        return (b, total)
    }
}

enum IndexFormat {
    static let magic: [UInt8] = Array("FLSYMIDX".utf8)
    /// Bump whenever the layout or the meaning of a table changes: old files are then rebuilt.
    // 5: DWARF 5 files in directory entry 0 are no longer joined to DW_AT_comp_dir again.
    static let version: UInt32 = 5
    static let flagHasDWARF: UInt32 = 1
    static let headerSize = 512
    static let maxBuildIDLength = 64
    static let tableOffset = 40 + maxBuildIDLength
    static let loadAddressOffset = headerSize - 8

    /// Stores the payload's checksum in the header of an index in memory.
    static func writeChecksum(_ b: UnsafeMutableRawPointer, length: Int) {
        let sum = checksum(UnsafeRawBufferPointer(start: b + headerSize, count: length - headerSize))
        b.storeBytes(of: sum.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// A fast 64-bit checksum (multiply-xor over 8-byte words). It detects torn writes and bit rot,
    /// not tampering; the cache directory belongs to the user running the symbolicator.
    static func checksum(_ buf: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(buf.count)
        let words = buf.count / 8
        var i = 0
        var h2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        // Two independent lanes hide the multiply latency.
        while i + 1 < words {
            let a = buf.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)
            let b = buf.loadUnaligned(fromByteOffset: i * 8 + 8, as: UInt64.self)
            h = (h ^ a) &* 0x0000_0100_0000_01B3
            h2 = (h2 ^ b) &* 0x9E37_79B9_7F4A_7C15
            i += 2
        }
        while i < words { h = (h ^ buf.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) &* 0x0000_0100_0000_01B3; i += 1 }
        for j in (words * 8)..<buf.count { h = (h ^ UInt64(buf[j])) &* 0x0000_0100_0000_01B3 }
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
