// A full index built on two threads: runs of four units (in file order) alternate between them,
// each parsed with the thread's own libdw sessions over the one mapped Elf; then the second
// thread's tables are appended to the first's (column copies split between two threads). The
// second thread also reads the ELF symbols, and each sorts its own scope ranges.
//
// libdw 0.188 is not thread-safe per Dwarf handle (abbreviations, line tables and split units are
// loaded lazily into it), so each thread has its own (`dwarf_begin_elf` per session). libelf
// (built without thread safety on Debian) caches section headers and section data in the Elf on
// first use: one `dwarf_begin_elf` on this thread before the second starts loads everything libdw
// asks libelf for, and afterwards both threads only read those caches and the mapping. One Elf,
// not two: the file's pages are mapped, and counted in peak RSS, once; each thread releases only
// its own units' pages (`UnitPageReleaser`). The merge re-interns the second builder's strings
// and renumbers its files, scopes, rows and symbols; flattening then runs once on the merged
// tables (two sorted runs of ranges), so the result answers every lookup as a single-threaded
// build does (its string blob may be ordered differently). The assignment of units is fixed, so
// the result is the same from run to run.
import CDw
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
    import Glibc
#endif

extension DWARFIndexBuilder {
    /// Adjacent units per thread: their file pages are released in one call (`UnitPageReleaser`).
    static let unitsPerRun = 4

    /// Files smaller than this are built on one thread: a thread and a second open cost more.
    static let parallelThresholdBytes: UInt64 = 1 << 20

    /// Nil when one thread is the better choice (one CPU, a small file, an unreadable second handle).
    static func buildInParallel(
        debugFile: ELFHandle, symbolSources: [ELFHandle],
        minimumBytes: UInt64 = parallelThresholdBytes, supplementary: String? = nil,
        units scanned: UnitTable? = nil, opensSplitUnits: Bool = true
    ) -> IndexTables? {
        guard ProcessInfo.processInfo.activeProcessorCount >= 2,
            let units = scanned ?? UnitTable.scan(debugFile.elf), units.offsets.count >= 2,
            units.totalBytes >= minimumBytes
        else { return nil }
        // Runs of units alternate between the threads in file order. Halves by bytes were 2:1 in time on the
        // Python library (the cost per byte differs between its early and late units); alternating
        // short runs averages that out, and a fixed assignment keeps the result the same from run to run.
        let run = DWARFIndexBuilder.unitsPerRun
        let first = units.offsets.enumerated().filter { ($0.offset / run) % 2 == 0 }.map(\.element)
        let second = units.offsets.enumerated().filter { ($0.offset / run) % 2 == 1 }.map(\.element)
        // Section headers, names and data (decompressed when compressed) cached in the Elf here.
        guard let warm = DWARFSession.begin(debugFile.elf) else { return nil }
        dwarf_end(warm)
        // The line-table sections once, here: each thread reading them would load any section libdw
        // did not (a corrupt .zdebug_line) into the Elf on two threads at once.
        let lineSections: LineSections?? = .some(DWARFIndexBuilder().readsLineTables ? LineSections(debugFile.elf) : nil)
        // Likewise the symbol and string tables the second thread reads (libelf loads a section's
        // data into the Elf on its first elf_getdata).
        for source in symbolSources {
            for section in source.sections() where section.header.sh_type == UInt32(SHT_SYMTAB) || section.header.sh_type == UInt32(SHT_DYNSYM) {
                _ = elf_getdata(section.scn, nil)
                if let strings = elf_getscn(source.elf, Int(section.header.sh_link)) { _ = elf_getdata(strings, nil) }
            }
        }

        final class Box: @unchecked Sendable {
            var builder = DWARFIndexBuilder(); var any = false
            let handle: ELFHandle
            var symbolSources: [ELFHandle] = []
            init(_ h: ELFHandle) { handle = h }
        }
        let other = Box(debugFile)
        other.builder.opensSplitUnits = opensSplitUnits
        // Room for each half's rows and scopes up front: grown by doubling, the large columns were
        // reallocated ~20 times each (every time a fresh mapping, a copy and, with two threads, a
        // TLB shootdown on unmapping the old one). Reserved pages that are never written cost no
        // memory, so the estimate errs high (Python library: ~4 bytes of .debug_line per row).
        // Section sizes come from the file (an uploaded one, on the server): no larger than the file.
        var fileSize = 0
        _ = elf_rawfile(debugFile.elf, &fileSize)
        let sizes = debugFile.sections().reduce(into: [String: UInt64]()) { $0[$1.name] = min($1.header.sh_size, UInt64(max(fileSize, 0))) }
        let rowsPerHalf = Int((sizes[".debug_line"] ?? 0) / 4)
        let scopesPerHalf = Int((sizes[".debug_info"] ?? 0) / 300)
        other.builder.reserve(rows: rowsPerHalf, scopes: scopesPerHalf)
        let done = DispatchSemaphore(value: 0)
        // The ELF symbols are read on the second thread too, after its units: they need only
        // libelf's caches, warmed above, and take the serial tail off the critical path.
        other.symbolSources = symbolSources
        let secondHalf: @Sendable () -> Void = {
            other.any = other.builder.walkUnits(
                other.handle.elf, only: second, supplementary: SupplementaryDwarf.opening(supplementary),
                releasePages: true, preparedLineSections: lineSections)
            other.builder.sortRanges()
            other.builder.readSymbols(other.symbolSources, deduplicate: true)
            done.signal()
        }
        // No second thread to be had: this one does that half first (the result is the same).
        if !DetachedThread.start(secondHalf) { secondHalf() }
        var b = DWARFIndexBuilder()
        b.opensSplitUnits = opensSplitUnits
        b.reserve(rows: rowsPerHalf, scopes: scopesPerHalf)
        let any = b.walkUnits(
            debugFile.elf, only: first, supplementary: SupplementaryDwarf.opening(supplementary),
            releasePages: true, preparedLineSections: lineSections)
        b.sortRanges()
        done.wait()
        b.merge(other.builder)
        let otherMissing = other.builder.missingSplitUnits
        other.builder = DWARFIndexBuilder()  // its tables are copied: free them before flattening (peak RSS)
        b.t.hasDWARF = any || other.any
        b.flattenScopes()
        b.t.strings = b.pool.bytes
        b.t.missingSplitUnits = b.missingSplitUnits + otherMissing
        return b.t
    }

    mutating func reserve(rows: Int, scopes: Int) {
        t.rowAddress.reserveCapacity(rows); t.rowFile.reserveCapacity(rows)
        t.rowLine.reserveCapacity(rows); t.rowColumn.reserveCapacity(rows)
        t.scopeName.reserveCapacity(scopes); t.scopeParent.reserveCapacity(scopes); t.scopeCallFile.reserveCapacity(scopes)
        t.scopeCallLine.reserveCapacity(scopes); t.scopeCallColumn.reserveCapacity(scopes); t.scopeFlags.reserveCapacity(scopes)
        ranges.reserveCapacity(scopes * 2)
    }

    /// Appends `o`'s units (walked, not yet flattened) and ELF symbols to this builder's.
    mutating func merge(_ o: DWARFIndexBuilder) {
        // Strings: every string `o` holds went through its content dictionary.
        var stringMap = [UInt32](repeating: IndexTables.none, count: o.pool.bytes.count)
        // A full build interns every string it stores, so `o`'s blob is exactly its strings one
        // after another: read in order (sequential, not in hash-table order).
        o.pool.bytes.withUnsafeBytes { b in
            var r = 1
            while r < b.count {
                let start = b.baseAddress! + r
                let n = strlen(start.assumingMemoryBound(to: CChar.self))
                stringMap[r] = pool.intern(bytes: UnsafeRawBufferPointer(start: start, count: n))
                r += n + 1
            }
        }
        // Files: by path, shared with ours when equal.
        var fileMap = [UInt32](repeating: IndexTables.none, count: o.t.files.count)
        for (i, sref) in o.t.files.enumerated() {
            let mine = stringMap[Int(sref)]
            if let f = fileIndex[mine] {
                fileMap[i] = f
            } else {
                let f = UInt32(t.files.count)
                t.files.append(mine)
                fileIndex[mine] = f
                fileMap[i] = f
            }
        }
        // The columns are copied on two threads, each taking whole arrays (a box per array: each
        // is then mutated by one thread only): the copy was a measurable part of the serial tail.
        let rowBase = UInt32(t.rowAddress.count)
        let unitBase = UInt32(t.cuRowStart.count)
        let scopeBase = UInt32(t.scopeName.count)
        let rowAddress = Column(&t.rowAddress), rowFile = Column(&t.rowFile), rowLine = Column(&t.rowLine)
        let rowColumn = Column(&t.rowColumn), scopeName = Column(&t.scopeName), scopeParent = Column(&t.scopeParent)
        let scopeCallFile = Column(&t.scopeCallFile), scopeCallLine = Column(&t.scopeCallLine)
        let scopeCallColumn = Column(&t.scopeCallColumn), scopeFlags = Column(&t.scopeFlags), scopeRanges = Column(&ranges)
        let symbolAddress = Column(&t.symbolAddress), symbolSize = Column(&t.symbolSize)
        let symbolName = Column(&t.symbolName), symbolFile = Column(&t.symbolFile)
        let other = Shared(o), fileMapping = fileMap, stringMapping = stringMap
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            let other = other.value
            @inline(__always) func file(_ f: UInt32) -> UInt32 { f == IndexTables.none ? f : fileMapping[Int(f)] }
            @inline(__always) func string(_ s: UInt32) -> UInt32 { s == IndexTables.none ? s : stringMapping[Int(s)] }
            if part == 0 {
                rowAddress.append(other.t.rowAddress)
                rowColumn.append(other.t.rowColumn)
                scopeRanges.append(other.ranges.lazy.map { ScopeRange(low: $0.low, high: $0.high, scope: $0.scope + scopeBase, depth: $0.depth) })
                symbolAddress.append(other.t.symbolAddress)
                symbolSize.append(other.t.symbolSize)
            } else {
                rowFile.append(other.t.rowFile.lazy.map { file($0) })
                rowLine.append(other.t.rowLine)
                scopeName.append(other.t.scopeName.lazy.map { string($0) })
                scopeParent.append(other.t.scopeParent.lazy.map { $0 == IndexTables.none ? $0 : $0 + scopeBase })
                scopeCallFile.append(other.t.scopeCallFile.lazy.map { file($0) })
                scopeCallLine.append(other.t.scopeCallLine)
                scopeCallColumn.append(other.t.scopeCallColumn)
                scopeFlags.append(other.t.scopeFlags)
                symbolName.append(other.t.symbolName.lazy.map { string($0) })
                symbolFile.append(other.t.symbolFile.lazy.map { file($0) })
            }
        }
        t.rowAddress = rowAddress.take(); t.rowFile = rowFile.take(); t.rowLine = rowLine.take(); t.rowColumn = rowColumn.take()
        t.scopeName = scopeName.take(); t.scopeParent = scopeParent.take(); t.scopeCallFile = scopeCallFile.take()
        t.scopeCallLine = scopeCallLine.take(); t.scopeCallColumn = scopeCallColumn.take(); t.scopeFlags = scopeFlags.take()
        ranges = scopeRanges.take()
        t.symbolAddress = symbolAddress.take(); t.symbolSize = symbolSize.take()
        t.symbolName = symbolName.take(); t.symbolFile = symbolFile.take()
        // Units.
        t.cuRowStart.append(contentsOf: o.t.cuRowStart.lazy.map { $0 + rowBase })
        t.cuRowEnd.append(contentsOf: o.t.cuRowEnd.lazy.map { $0 + rowBase })
        var cus = zip(zip(t.cuLow, t.cuHigh), t.cuOfRange).map { ($0.0, $0.1, $1) }
        for i in o.t.cuLow.indices { cus.append((o.t.cuLow[i], o.t.cuHigh[i], o.t.cuOfRange[i] + unitBase)) }
        unitFirstScope += o.unitFirstScope.map { $0 + scopeBase }
        unitFileOffset += o.unitFileOffset
        let segments = DWARFIndexBuilder.unitSegments(cus, fileOffsets: unitFileOffset)
        unitsOverlap = unitsOverlap || o.unitsOverlap || segments.overlapping
        cus = segments.segments
        t.cuLow = cus.map { $0.0 }; t.cuHigh = cus.map { $0.1 }; t.cuOfRange = cus.map { $0.2 }
    }
}

/// A value both threads of the merge only read.
private final class Shared<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// One table column handed to one thread of the merge (`merge`): moved out of the tables so the
/// box holds the only reference (appends never copy), then moved back.
private final class Column<Element>: @unchecked Sendable {
    private var values: [Element]
    init(_ column: inout [Element]) { values = column; column = [] }
    /// Appends `more`, growing to the exact size first (doubling would briefly hold twice the column).
    func append<S: Sequence>(_ more: S) where S.Element == Element {
        values.reserveCapacity(values.count + more.underestimatedCount)
        values.append(contentsOf: more)
    }
    func take() -> [Element] { let v = values; values = []; return v }
}
