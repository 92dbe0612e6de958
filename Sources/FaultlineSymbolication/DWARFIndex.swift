// The per-module lookup index: flat sorted tables (IndexFormat.swift), binary-searched,
// identical in memory and on disk.
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// A loaded, validated, immutable index over memory it owns: a mapped cache file, or the
/// builder's own arrays (an index built in this run is not copied into the file layout first:
/// that copy was ~5% of a cold full build, serial, and held a second copy of the tables; it is
/// written in that layout only when stored, `write(to:)`).
/// Immutable after init, so it is shared between threads freely.
final class DWARFIndex: @unchecked Sendable {
    private enum Storage {
        case file(base: UnsafeRawPointer, length: Int, release: @Sendable (UnsafeRawPointer, Int) -> Void)
        /// The arrays the buffers below point into; never mutated, so their storage stays put.
        case built(IndexTables, buildID: BuildID?)
    }
    private let storage: Storage
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

    /// Bytes of the index in its file layout.
    var byteCount: Int {
        switch storage {
        case .file(_, let length, _): return length
        case .built(let t, _): return t.layout().total
        }
    }

    /// Validates magic, version, size, build-id, checksum and every table's bounds; takes
    /// ownership of the memory (released with `release` on deinit, or on a thrown error).
    init(
        memory: UnsafeRawPointer, length: Int, expectedBuildID: BuildID?,
        verifyChecksum: Bool = true,
        release: @escaping @Sendable (UnsafeRawPointer, Int) -> Void
    ) throws(IndexLoadError) {
        self.storage = .file(base: memory, length: length, release: release)
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
                bytes <= UInt64(length) - off
            else { throw .badTable("\(a) out of bounds") }
            slices.append((memory + Int(off), Int(n)))
        }
        func u8(_ a: IndexArray) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: slices[a.rawValue].0.assumingMemoryBound(to: UInt8.self), count: slices[a.rawValue].1)
        }
        func u32(_ a: IndexArray) -> UnsafeBufferPointer<UInt32> {
            UnsafeBufferPointer(start: slices[a.rawValue].0.assumingMemoryBound(to: UInt32.self), count: slices[a.rawValue].1)
        }
        func u64(_ a: IndexArray) -> UnsafeBufferPointer<UInt64> {
            UnsafeBufferPointer(start: slices[a.rawValue].0.assumingMemoryBound(to: UInt64.self), count: slices[a.rawValue].1)
        }
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
        guard tablesAgree else { throw .badTable("array lengths disagree") }
        ok = true
    }

    /// An index over freshly built tables (no file involved), validated like one read from disk:
    /// a builder bug becomes "unreadable", not a crash.
    init(built tables: consuming IndexTables, buildID: BuildID?) throws(IndexLoadError) {
        let t = consume tables
        // The pointers stay valid: `storage` keeps the arrays alive and nothing mutates them.
        func view<T>(_ a: [T]) -> UnsafeBufferPointer<T> { a.withUnsafeBufferPointer { $0 } }
        strings = view(t.strings); files = view(t.files)
        cuLow = view(t.cuLow); cuHigh = view(t.cuHigh); cuOfRange = view(t.cuOfRange)
        cuRowStart = view(t.cuRowStart); cuRowEnd = view(t.cuRowEnd)
        rowAddress = view(t.rowAddress); rowFile = view(t.rowFile); rowLine = view(t.rowLine); rowColumn = view(t.rowColumn)
        scopeName = view(t.scopeName); scopeParent = view(t.scopeParent); scopeCallFile = view(t.scopeCallFile)
        scopeCallLine = view(t.scopeCallLine); scopeCallColumn = view(t.scopeCallColumn); scopeFlags = view(t.scopeFlags)
        segmentStart = view(t.segmentStart); segmentScope = view(t.segmentScope)
        symbolAddress = view(t.symbolAddress); symbolSize = view(t.symbolSize); symbolName = view(t.symbolName); symbolFile = view(t.symbolFile)
        hasDWARF = t.hasDWARF
        firstLoadAddress = t.firstLoadAddress
        missingSplitUnits = t.missingSplitUnits
        storage = .built(t, buildID: buildID)
        guard tablesAgree else { throw .badTable("array lengths disagree") }
    }

    /// Parallel arrays must agree; lookups then only bounds-check the references they follow.
    private var tablesAgree: Bool {
        strings.last == 0
            && cuLow.count == cuHigh.count && cuLow.count == cuOfRange.count && cuRowStart.count == cuRowEnd.count
            && rowAddress.count == rowFile.count && rowAddress.count == rowLine.count && rowAddress.count == rowColumn.count
            && scopeName.count == scopeParent.count && scopeName.count == scopeCallFile.count
            && scopeName.count == scopeCallLine.count && scopeName.count == scopeCallColumn.count && scopeName.count == scopeFlags.count
            && segmentStart.count == segmentScope.count
            && symbolAddress.count == symbolSize.count && symbolAddress.count == symbolName.count
            && symbolAddress.count == symbolFile.count
    }

    deinit { if case .file(let base, let length, let release) = storage { release(base, length) } }

    /// Builds an index in memory from freshly built tables (no file involved).
    static func inMemory(_ tables: consuming IndexTables, buildID: BuildID?) -> DWARFIndex? {
        try? DWARFIndex(built: tables, buildID: buildID)
    }

    /// Writes the index in its file layout (`IndexFormat`), checksum included, to `fd`.
    func write(to fd: Int32) -> Bool {
        switch storage {
        case .file(let base, let length, _): return IndexFormat.writeAll(fd, UnsafeRawBufferPointer(start: base, count: length))
        case .built(let t, let buildID): return t.write(to: fd, buildID: buildID)
        }
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
        var lo = lo, hi = hi  // search in [lo, hi)
        while lo < hi {
            let mid = (lo + hi) >> 1
            if a[mid] <= x { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? lo - 1 : nil
    }

    /// `lastNotAbove(a, lo, hi, x)`, searched forward from `hint` when the hint is an element in
    /// [lo, hi) that is `<= x` (the previous answer of a lookup in rising address order): the
    /// steps double from there, so an answer a few elements on costs a few probes in memory
    /// already in cache, where a search from scratch mispredicts a branch at nearly every level.
    @inline(__always) private static func lastNotAbove(_ a: UnsafeBufferPointer<UInt64>, _ lo: Int, _ hi: Int, _ x: UInt64, from hint: Int) -> Int? {
        guard hint >= lo, hint < hi, a[hint] <= x else { return lastNotAbove(a, lo, hi, x) }
        var known = hint, step = 1  // a[known] <= x
        while known + step < hi && a[known + step] <= x {
            known += step
            step <<= 1
        }
        // The answer is in [known, min(known + step, hi)): everything after is above x.
        return lastNotAbove(a, known + 1, min(known + step, hi), x) ?? known
    }

    /// The line row for `address`: the last row at or below it in the unit whose ranges cover it.
    private func lineRow(_ address: UInt64) -> Int? {
        var hints = SearchHints()
        return lineRow(address, &hints)
    }

    private func lineRow(_ address: UInt64, _ hints: inout SearchHints) -> Int? {
        guard let r = DWARFIndex.lastNotAbove(cuLow, 0, cuLow.count, address, from: hints.range) else { return nil }
        hints.range = r
        guard address < cuHigh[r] else { return nil }
        let cu = Int(cuOfRange[r])
        guard cu < cuRowStart.count else { return nil }
        let start = Int(cuRowStart[cu]), end = Int(cuRowEnd[cu])
        guard start <= end, end <= rowAddress.count, start < end else { return nil }
        guard let row = DWARFIndex.lastNotAbove(rowAddress, start, end, address, from: hints.row), row >= start else { return nil }
        hints.row = row
        return rowFile[row] == IndexTables.none ? nil : row  // an end-of-sequence row: a gap
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
            let r = DWARFIndex.lastNotAbove(cuLow, 0, cuLow.count, address), address < cuHigh[r]
        else { return nil }
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
        var hints = SearchHints()
        return symbol(address, &hints)
    }

    private func symbol(_ address: UInt64, _ hints: inout SearchHints) -> Int? {
        guard let s = DWARFIndex.lastNotAbove(symbolAddress, 0, symbolAddress.count, address, from: hints.symbol) else { return nil }
        hints.symbol = s
        let size = symbolSize[s]
        if size != 0 && symbolAddress[s] &+ size <= address { return nil }
        return s
    }

    /// Where one lookup's searches ended, for the next lookup to start from. A lookup at a lower
    /// address than the last ignores them (each search checks its hint before using it), so
    /// hints never change an answer, only how fast it is found.
    struct SearchHints {
        fileprivate var segment = -1, range = -1, row = -1, symbol = -1
    }

    /// Frames for one ELF virtual address, innermost first; empty when nothing is known.
    func lookup(_ address: UInt64, into frames: inout [IndexedFrame]) {
        var hints = SearchHints()
        lookup(address, into: &frames, hints: &hints)
    }

    /// `lookup(_:into:)` for addresses looked up in rising order: each search starts where
    /// the one before ended (`hints`, kept by the caller between lookups).
    func lookup(_ address: UInt64, into frames: inout [IndexedFrame], hints: inout SearchHints) {
        frames.removeAll(keepingCapacity: true)
        appendFrames(of: address, to: &frames, hints: &hints)
    }

    /// Appends the frames of `address` (innermost first) to `frames` and returns how many: what
    /// `lookup` finds, without a separate array to copy them from (address mode keeps every
    /// address's frames in one array).
    @discardableResult
    func appendFrames(of address: UInt64, to frames: inout [IndexedFrame], hints: inout SearchHints) -> Int {
        let first = frames.count
        var scope = IndexTables.none
        if let seg = DWARFIndex.lastNotAbove(segmentStart, 0, segmentStart.count, address, from: hints.segment) {
            scope = segmentScope[seg]
            hints.segment = seg
        }
        let row = lineRow(address, &hints)
        var file = IndexTables.none, line: UInt32 = 0, column: UInt32 = 0
        if let row { file = rowFile[row]; line = rowLine[row]; column = rowColumn[row] }
        var guardDepth = 0
        while scope != IndexTables.none, Int(scope) < scopeName.count, guardDepth < 512 {
            let s = Int(scope)
            let inlined = scopeFlags[s] & IndexTables.scopeIsInlined != 0
            frames.append(
                IndexedFrame(
                    name: scopeName[s], file: file, line: line, column: column,
                    isInlined: inlined, nameFromSymbolTable: false))
            // The caller's location is this inlined scope's call site.
            file = scopeCallFile[s]; line = scopeCallLine[s]; column = scopeCallColumn[s]
            scope = inlined ? scopeParent[s] : IndexTables.none
            guardDepth += 1
        }
        if frames.count == first, row != nil {
            frames.append(
                IndexedFrame(
                    name: IndexTables.none, file: file, line: line, column: column,
                    isInlined: false, nameFromSymbolTable: false))
        }
        // Like llvm-symbolizer, the out-of-line frame is named after the ELF symbol covering the
        // address: it shows GCC clones (`.constprop.0`, `.cold`) as the linker sees them. A local
        // symbol lends its STT_FILE name only when DWARF gave no frame at all (line stays 0): where
        // a function's DIE covers the address but no line row does (the start of a GCC `.cold`
        // part), llvm prints `??:0:0`.
        if let sym = symbol(address, &hints) {
            if frames.count == first {
                frames.append(
                    IndexedFrame(
                        name: symbolName[sym], file: symbolFile[sym], line: 0, column: 0,
                        isInlined: false, nameFromSymbolTable: true))
            } else {
                frames[frames.count - 1].name = symbolName[sym]
            }
        }
        return frames.count - first
    }
}
