// The per-module lookup index: flat sorted tables (IndexFormat.swift), binary-searched,
// identical in memory and on disk.
import FaultlineProtocol
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loaded, validated, immutable index over memory it owns (mapped file or heap copy).
/// Immutable after init, so it is shared between threads freely.
final class DWARFIndex: @unchecked Sendable {
    private let base: UnsafeRawPointer
    private let length: Int
    private let release: @Sendable (UnsafeRawPointer, Int) -> Void
    let hasDWARF: Bool
    let firstLoadAddress: UInt64
    /// See `IndexTables.missingSplitUnits`; empty for an index loaded from the cache.
    private(set) var missingSplitUnits: [String] = []

    let strings: UnsafeBufferPointer<UInt8>
    let files: UnsafeBufferPointer<UInt32>
    let cuLow: UnsafeBufferPointer<UInt64>, cuHigh: UnsafeBufferPointer<UInt64>, cuOfRange: UnsafeBufferPointer<UInt32>
    let cuRowStart: UnsafeBufferPointer<UInt32>, cuRowEnd: UnsafeBufferPointer<UInt32>
    let rowAddress: UnsafeBufferPointer<UInt64>, rowFile: UnsafeBufferPointer<UInt32>
    let rowLine: UnsafeBufferPointer<UInt32>, rowColumn: UnsafeBufferPointer<UInt32>
    let scopeName: UnsafeBufferPointer<UInt32>, scopeParent: UnsafeBufferPointer<UInt32>
    let scopeCallFile: UnsafeBufferPointer<UInt32>, scopeCallLine: UnsafeBufferPointer<UInt32>
    let scopeCallColumn: UnsafeBufferPointer<UInt32>, scopeFlags: UnsafeBufferPointer<UInt32>
    let segmentStart: UnsafeBufferPointer<UInt64>, segmentScope: UnsafeBufferPointer<UInt32>
    let symbolAddress: UnsafeBufferPointer<UInt64>, symbolSize: UnsafeBufferPointer<UInt64>
    let symbolName: UnsafeBufferPointer<UInt32>, symbolFile: UnsafeBufferPointer<UInt32>

    var byteCount: Int { length }

    /// Validates magic, version, size, build-id, checksum and every table's bounds; takes
    /// ownership of the memory (released with `release` on deinit, or on a thrown error).
    init(memory: UnsafeRawPointer, length: Int, expectedBuildID: BuildID?,
         verifyChecksum: Bool = true,
         release: @escaping @Sendable (UnsafeRawPointer, Int) -> Void) throws(IndexLoadError) {
        self.base = memory
        self.length = length
        self.release = release
        var ok = false
        defer { if !ok { release(memory, length) } }
        guard length >= IndexFormat.headerSize else { throw .tooSmall }
        let raw = UnsafeRawBufferPointer(start: memory, count: length)
        guard Array(raw[0..<8]) == IndexFormat.magic else { throw .badMagic }
        let version = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard version == IndexFormat.version else { throw .wrongVersion(version) }
        let flags = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        let total = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        guard total == UInt64(length) else { throw .wrongSize }
        let idLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 32, as: UInt32.self)))
        guard idLength <= IndexFormat.maxBuildIDLength else { throw .badTable("build-id length") }
        let storedID = Array(raw[40..<(40 + idLength)])
        if let expectedBuildID {
            guard storedID == Array(expectedBuildID.bytes.prefix(IndexFormat.maxBuildIDLength)) else { throw .wrongBuildID }
        }
        let count = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 36, as: UInt32.self)))
        guard count == IndexArray.allCases.count else { throw .badTable("array count \(count)") }
        if verifyChecksum {
            let stored = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            let sum = IndexFormat.checksum(UnsafeRawBufferPointer(rebasing: raw[IndexFormat.headerSize...]))
            guard stored == sum else { throw .badChecksum }
        }
        var slices: [(UnsafeRawPointer, Int)] = []
        for a in IndexArray.allCases {
            let off = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: IndexFormat.tableOffset + a.rawValue * 16, as: UInt64.self))
            let n = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: IndexFormat.tableOffset + a.rawValue * 16 + 8, as: UInt64.self))
            let (bytes, overflow) = n.multipliedReportingOverflow(by: UInt64(a.elementSize))
            guard !overflow, off >= UInt64(IndexFormat.headerSize), off % 8 == 0, off <= UInt64(length),
                  bytes <= UInt64(length) - off else { throw .badTable("\(a) out of bounds") }
            slices.append((memory + Int(off), Int(n)))
        }
        func u8(_ a: IndexArray) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: slices[a.rawValue].0.assumingMemoryBound(to: UInt8.self), count: slices[a.rawValue].1) }
        func u32(_ a: IndexArray) -> UnsafeBufferPointer<UInt32> { UnsafeBufferPointer(start: slices[a.rawValue].0.assumingMemoryBound(to: UInt32.self), count: slices[a.rawValue].1) }
        func u64(_ a: IndexArray) -> UnsafeBufferPointer<UInt64> { UnsafeBufferPointer(start: slices[a.rawValue].0.assumingMemoryBound(to: UInt64.self), count: slices[a.rawValue].1) }
        strings = u8(.strings); files = u32(.files)
        cuLow = u64(.cuLow); cuHigh = u64(.cuHigh); cuOfRange = u32(.cuOfRange)
        cuRowStart = u32(.cuRowStart); cuRowEnd = u32(.cuRowEnd)
        rowAddress = u64(.rowAddress); rowFile = u32(.rowFile); rowLine = u32(.rowLine); rowColumn = u32(.rowColumn)
        scopeName = u32(.scopeName); scopeParent = u32(.scopeParent); scopeCallFile = u32(.scopeCallFile)
        scopeCallLine = u32(.scopeCallLine); scopeCallColumn = u32(.scopeCallColumn); scopeFlags = u32(.scopeFlags)
        segmentStart = u64(.segmentStart); segmentScope = u32(.segmentScope)
        symbolAddress = u64(.symbolAddress); symbolSize = u64(.symbolSize); symbolName = u32(.symbolName); symbolFile = u32(.symbolFile)
        hasDWARF = flags & IndexFormat.flagHasDWARF != 0
        firstLoadAddress = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: IndexFormat.loadAddressOffset, as: UInt64.self))
        // Parallel arrays must agree; lookups then only bounds-check the references they follow.
        guard strings.last == 0,
              cuLow.count == cuHigh.count, cuLow.count == cuOfRange.count, cuRowStart.count == cuRowEnd.count,
              rowAddress.count == rowFile.count, rowAddress.count == rowLine.count, rowAddress.count == rowColumn.count,
              scopeName.count == scopeParent.count, scopeName.count == scopeCallFile.count,
              scopeName.count == scopeCallLine.count, scopeName.count == scopeCallColumn.count, scopeName.count == scopeFlags.count,
              segmentStart.count == segmentScope.count,
              symbolAddress.count == symbolSize.count, symbolAddress.count == symbolName.count,
              symbolAddress.count == symbolFile.count
        else { throw .badTable("array lengths disagree") }
        ok = true
    }

    deinit { release(base, length) }

    /// Builds an index in memory from freshly built tables (no file involved). The tables are
    /// consumed so their arrays are freed before the caller goes on (peak memory).
    static func inMemory(_ tables: consuming IndexTables, buildID: BuildID?) -> DWARFIndex? {
        var t = consume tables
        let missing = t.missingSplitUnits
        // The checksum guards files; one that is never stored needs none (3 ms on the Python library).
        let (mem, length) = t.serialize(buildID: buildID, checksum: false)
        // Validated like a file from disk: a builder bug becomes "unreadable", not a crash.
        let index = try? DWARFIndex(memory: mem, length: length, expectedBuildID: buildID, verifyChecksum: false,
                                    release: { p, _ in UnsafeMutableRawPointer(mutating: p).deallocate() })
        index?.missingSplitUnits = missing
        index?.checksumPending.withLock { $0 = true }
        return index
    }

    /// Built in memory without its checksum (`inMemory`); `bytes` writes it first.
    private let checksumPending = Mutex(false)

    /// The index's bytes, exactly as they are stored in a cache file.
    var bytes: UnsafeRawBufferPointer {
        checksumPending.withLock { pending in
            // The memory is the blob `serialize` allocated for this index, so it may be written.
            if pending { IndexFormat.writeChecksum(UnsafeMutableRawPointer(mutating: base), length: length); pending = false }
        }
        return UnsafeRawBufferPointer(start: base, count: length)
    }

    // MARK: Strings

    /// A NUL-terminated string inside the blob (the blob ends with NUL, so this stays in bounds).
    @inline(__always) func cString(_ ref: UInt32) -> UnsafeBufferPointer<UInt8>? {
        guard ref != IndexTables.none, Int(ref) < strings.count else { return nil }
        let start = strings.baseAddress! + Int(ref)
        let n = strlen(UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self))
        return UnsafeBufferPointer(start: start, count: n)
    }

    func string(_ ref: UInt32) -> String? {
        guard let b = cString(ref) else { return nil }
        return String(decoding: b, as: UTF8.self)
    }

    @inline(__always) func fileString(_ file: UInt32) -> UInt32 {
        guard file != IndexTables.none, Int(file) < files.count else { return IndexTables.none }
        return files[Int(file)]
    }

    // MARK: Lookup

    /// Index of the last element `<= x` in a sorted buffer, or nil.
    @inline(__always) private static func lastNotAbove(_ a: UnsafeBufferPointer<UInt64>, _ lo: Int, _ hi: Int, _ x: UInt64) -> Int? {
        var lo = lo, hi = hi   // search in [lo, hi)
        while lo < hi {
            let mid = (lo + hi) >> 1
            if a[mid] <= x { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? lo - 1 : nil
    }

    /// The line row for `address`: the last row at or below it in the unit whose ranges cover it.
    private func lineRow(_ address: UInt64) -> Int? {
        guard let r = DWARFIndex.lastNotAbove(cuLow, 0, cuLow.count, address), address < cuHigh[r] else { return nil }
        let cu = Int(cuOfRange[r])
        guard cu < cuRowStart.count else { return nil }
        let start = Int(cuRowStart[cu]), end = Int(cuRowEnd[cu])
        guard start <= end, end <= rowAddress.count, start < end else { return nil }
        guard let row = DWARFIndex.lastNotAbove(rowAddress, start, end, address), row >= start else { return nil }
        return rowFile[row] == IndexTables.none ? nil : row   // an end-of-sequence row: a gap
    }

    /// The innermost scope at `address` (`none` in a gap).
    private func innermostScope(_ address: UInt64) -> UInt32 {
        guard let seg = DWARFIndex.lastNotAbove(segmentStart, 0, segmentStart.count, address) else { return IndexTables.none }
        return segmentScope[seg]
    }

    /// Report mode only (never `--obj`): when the row for `address` has line 0 (Swift's
    /// `<compiler-generated>`), the nearest row with a line in the same sequence whose address
    /// has the same innermost (inline) scope: the closest one before it, else the closest after.
    func inferredLocation(_ address: UInt64) -> (file: UInt32, line: UInt32, column: UInt32)? {
        guard let row = lineRow(address), rowLine[row] == 0,
              let r = DWARFIndex.lastNotAbove(cuLow, 0, cuLow.count, address), address < cuHigh[r] else { return nil }
        let cu = Int(cuOfRange[r])
        let start = Int(cuRowStart[cu]), end = Int(cuRowEnd[cu])
        let scope = innermostScope(address)
        func usable(_ i: Int) -> Bool { rowLine[i] != 0 && innermostScope(rowAddress[i]) == scope }
        var i = row - 1, steps = 0
        while i >= start, steps < 4096, rowFile[i] != IndexTables.none {
            if usable(i) { return (rowFile[i], rowLine[i], rowColumn[i]) }
            i -= 1; steps += 1
        }
        i = row + 1; steps = 0
        while i < end, steps < 4096, rowFile[i] != IndexTables.none {
            if usable(i) { return (rowFile[i], rowLine[i], rowColumn[i]) }
            i += 1; steps += 1
        }
        return nil
    }

    /// The ELF symbol covering `address` (llvm-symbolizer's rule: the last symbol at or below it,
    /// unless it has a size that ends before the address).
    func symbol(_ address: UInt64) -> Int? {
        guard let s = DWARFIndex.lastNotAbove(symbolAddress, 0, symbolAddress.count, address) else { return nil }
        let size = symbolSize[s]
        if size != 0 && symbolAddress[s] &+ size <= address { return nil }
        return s
    }

    /// Frames for one ELF virtual address, innermost first; empty when nothing is known.
    func lookup(_ address: UInt64, into frames: inout [IndexedFrame]) {
        frames.removeAll(keepingCapacity: true)
        var scope = IndexTables.none
        if let seg = DWARFIndex.lastNotAbove(segmentStart, 0, segmentStart.count, address) { scope = segmentScope[seg] }
        let row = lineRow(address)
        var file = IndexTables.none, line: UInt32 = 0, column: UInt32 = 0
        if let row { file = rowFile[row]; line = rowLine[row]; column = rowColumn[row] }
        var guardDepth = 0
        while scope != IndexTables.none, Int(scope) < scopeName.count, guardDepth < 512 {
            let s = Int(scope)
            let inlined = scopeFlags[s] & IndexTables.scopeIsInlined != 0
            frames.append(IndexedFrame(name: scopeName[s], file: file, line: line, column: column,
                                       isInlined: inlined, nameFromSymbolTable: false))
            // The caller's location is this inlined scope's call site.
            file = scopeCallFile[s]; line = scopeCallLine[s]; column = scopeCallColumn[s]
            scope = inlined ? scopeParent[s] : IndexTables.none
            guardDepth += 1
        }
        if frames.isEmpty, row != nil {
            frames.append(IndexedFrame(name: IndexTables.none, file: file, line: line, column: column,
                                       isInlined: false, nameFromSymbolTable: false))
        }
        // Like llvm-symbolizer, the out-of-line frame is named after the ELF symbol covering the
        // address: it shows GCC clones (`.constprop.0`, `.cold`) as the linker sees them. A local
        // symbol also lends its STT_FILE name when DWARF gave the frame no file (line stays 0).
        if let sym = symbol(address) {
            if frames.isEmpty {
                frames.append(IndexedFrame(name: symbolName[sym], file: symbolFile[sym], line: 0, column: 0,
                                           isInlined: false, nameFromSymbolTable: true))
            } else {
                frames[frames.count - 1].name = symbolName[sym]
                if frames[frames.count - 1].file == IndexTables.none { frames[frames.count - 1].file = symbolFile[sym] }
            }
        }
    }
}
