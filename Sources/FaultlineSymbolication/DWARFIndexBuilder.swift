// Builds the lookup tables once per debug file: libdw parses, we walk every unit ourselves.
//
// Why not libdw's own lookups: clang/swiftc emit no .debug_aranges, so dwarf_addrdie finds no
// unit; dwarf_getscopes drops the children of DIEs without addresses (swiftc nests functions in
// DW_TAG_module) and is ~1.5 ms per address. A single walk over each unit's DIE tree, keeping
// subprogram and inlined-subroutine ranges with their call sites, answers the same questions by
// binary search (see docs/SYMBOLICATION.md and FIELD-NOTES.md, libdw section).
import CDw
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// One address range of a scope, before flattening into segments.
struct ScopeRange {
    var low: UInt64
    var high: UInt64
    var scope: UInt32
    var depth: Int32
}

/// A unit's line-table file names: libdw's (split units, and units our reader leaves to it) or
/// those `LineTableReader` decoded. Lines and DW_AT_call_file number files the same way in both.
enum UnitFileTable {
    /// libdw's Dwarf_Files (nil when it has none) and how many files it holds.
    case libdw(OpaquePointer?, Int)
    case decoded(LineFileTable)

    var count: Int {
        switch self {
        case .libdw(let files, let n): return files == nil ? 0 : max(n, 0)
        case .decoded(let table): return table.count
        }
    }

    /// File `i`'s path as llvm-symbolizer prints it (`LineTableFilePath`); nil out of range.
    func printedPath(_ i: Int, compDir: String?) -> String? {
        switch self {
        case .libdw(let files, _):
            guard let files, let p = dwarf_filesrc(files, i, nil, nil) else { return nil }
            return LineTableFilePath.path(
                libdwJoined: String(cString: p), directories: DWARFIndexBuilder.directories(files), compDir: compDir)
        case .decoded(let table):
            return i >= 0 && i < table.count ? LineTableFilePath.path(table, i, compDir: compDir) : nil
        }
    }
}

/// One unit's line-table file numbers → the index's file numbers. An array, not a dictionary:
/// it is read once per line-table row (hashing was ~3% of a full build).
struct UnitFiles {
    private var slots: [UInt32] = []

    /// `key` is a file number (>= 0) or -1 (the "??" file of rows without one).
    subscript(key: Int) -> UInt32? {
        get {
            let i = key &+ 1
            guard i >= 0, i < slots.count, slots[i] != IndexTables.none else { return nil }
            return slots[i]
        }
        set {
            let i = key &+ 1
            guard let newValue, i >= 0, i < 1 << 20 else { return }  // a corrupt number is just not remembered
            if i >= slots.count { slots.append(contentsOf: repeatElement(IndexTables.none, count: i + 1 - slots.count)) }
            slots[i] = newValue
        }
    }
}

struct DWARFIndexBuilder {
    var t = IndexTables()
    var pool = StringPool()
    var fileIndex: [UInt32: UInt32] = [:]  // path string ref → file index
    var ranges: [ScopeRange] = []
    /// The first scope of each unit (scopes are numbered in the order units are walked): a scope's
    /// unit without a field in every `ScopeRange`, which the sort moves around.
    var unitFirstScope: [UInt32] = []
    /// Each unit's offset in .debug_info: "first in the file" (the two-thread build numbers units
    /// in alternating runs, not in file order).
    var unitFileOffset: [UInt64] = []
    /// Some address is claimed by more than one unit (see `unitSegments`).
    var unitsOverlap = false
    /// DW_AT_dwo_name of skeleton units whose split unit libdw could not find (not persisted).
    var missingSplitUnits: [String] = []
    /// A walk through a `DebugInfoView` met a unit the view cannot serve (see `walkUnits`).
    private(set) var viewRefused = false
    /// Names of abstract origins already resolved, by DIE offset in .debug_info (see `scopeName`).
    private var originNames: [UInt64: UInt32] = [:]
    /// Off while a split unit's DIEs are walked: offsets there count from the start of that .dwo's
    /// own .debug_info, so two .dwo files (or a .dwo and the main file) share offsets.
    private var cacheOriginNames = true
    /// The supplementary file's Dwarf while walking a file that names it by `.debug_sup`.
    private var supDwarf: OpaquePointer? = nil
    /// Off: every unit's line table is read by libdw (the tests compare the two readers).
    var readsLineTables = true
    /// Off: a skeleton unit's split unit is not looked for (`Symbolicator.opensSplitUnits`).
    var opensSplitUnits = true
    /// Units whose line table `LineTableReader` read, and units other than skeletons left to libdw.
    var lineTableUnits = (own: 0, libdw: 0)
    /// One unit's rows, reused from unit to unit.
    private var lineRows: [LineRow] = []
    private var scratchColumns = ScratchColumns()

    /// Builds the index for `debugFile`; ELF symbols come from the first of `symbolSources`
    /// that has a `.symtab`, else from a `.dynsym`.
    /// - Parameter units: offsets of the units to parse (a partial index, `UnitTable`); nil parses all.
    /// - Parameter path: the debug file's path; a full build then parses alternate units on two
    ///   threads (DWARFIndexParallel.swift), each with its own libdw sessions over the one Elf.
    /// - Parameter supplementary: the supplementary file `debugFile` needs (dwz), found by the locator.
    /// - Parameter symbolsOnly: read only ELF symbols.
    /// - Parameter symbolsForUnitsOnly: a partial index keeps only the ELF symbols that can name an
    ///   address inside the parsed units' ranges (the caller rebuilds for any other address).
    /// - Parameter unitTable: `debugFile`'s units when the caller has scanned them already.
    static func build(
        debugFile: ELFHandle, symbolSources: [ELFHandle], units: [UInt64]? = nil, path: String? = nil,
        supplementary: String? = nil, symbolsOnly: Bool = false, symbolsForUnitsOnly: Bool = false,
        unitTable: UnitTable? = nil, opensSplitUnits: Bool = true
    ) -> IndexTables {
        if !symbolsOnly, units == nil, path != nil,
            let t = buildInParallel(
                debugFile: debugFile, symbolSources: symbolSources, supplementary: supplementary, units: unitTable, opensSplitUnits: opensSplitUnits)
        {
            return t
        }
        var b = DWARFIndexBuilder()
        b.opensSplitUnits = opensSplitUnits
        // A partial build reads its units through a view that starts at the first of them
        // (DebugInfoView.swift); a unit the view cannot serve sends the build back to the file.
        // The view stays mapped until the build returns: the string pool keeps addresses of the
        // .debug_str it read names from, and a mapping made later could reuse them.
        var view: DebugInfoView? = nil
        // symbolsOnly: DWARF that cannot be read whole (dwz without its supplementary file).
        if !symbolsOnly {
            let alt = SupplementaryDwarf.opening(supplementary)
            var viewUse = IndexTables.ViewUse.notTried
            if let units, let first = units.min() {
                view = DebugInfoView(debugFile, base: first)
            }
            if let view {
                b.t.hasDWARF = b.walkUnits(view.elf, only: units?.sorted(), supplementary: alt, releasePages: false, view: view)
                viewUse = b.viewRefused ? .refused : .used
                if b.viewRefused {
                    b = DWARFIndexBuilder()
                    b.opensSplitUnits = opensSplitUnits
                }
            }
            if viewUse != .used {
                b.t.hasDWARF = b.walkUnits(debugFile.elf, only: units, supplementary: alt, releasePages: units == nil)
            }
            b.t.debugInfoView = viewUse
        }
        b.flattenScopes()
        b.readSymbols(symbolSources, deduplicate: units == nil, windows: symbolsForUnitsOnly && units != nil ? b.unitWindows() : nil)
        // A partial build's symbol tables and unit are not read again (later addresses build anew).
        if units != nil { for source in symbolSources { releaseFilePages(source.elf) } }
        b.t.strings = b.pool.bytes
        b.t.missingSplitUnits = b.missingSplitUnits
        return b.t
    }

    // MARK: Units

    /// Units per libdw session. libdw keeps every unit's parsed line table and abbreviations
    /// until dwarf_end; ending the session every few units bounds that memory (for a large
    /// library it would hold tens of megabytes at once). The next session resumes at the next
    /// unit's offset.
    private static let unitsPerSession = 16

    /// - Parameter releasePages: drop the file's pages after each session (full builds, where they
    ///   are not read again; a partial index reads a few units and would only fault them back in).
    /// - Parameter preparedLineSections: the line-table sections, read by the caller after its own
    ///   `dwarf_begin_elf` (the two-thread build: libelf must not load a section on two threads).
    /// - Parameter view: `elf` is this view of the debug file (offsets in `only` are the file's;
    ///   libdw's count from `view.base`). A unit it cannot serve stops the walk with `viewRefused`.
    mutating func walkUnits(
        _ elf: OpaquePointer, only: [UInt64]?, supplementary: SupplementaryDwarf?, releasePages: Bool,
        preparedLineSections: LineSections?? = nil, view: DebugInfoView? = nil
    ) -> Bool {
        let releaser = releasePages ? UnitPageReleaser(elf) : nil
        // A partial build drops the pages of the unit headers libdw reads on the way to its units.
        let headerPages = only != nil && releaser == nil ? (view.map { $0.headerPages } ?? UnitPageReleaser(elf)) : nil
        let base = view?.base ?? 0
        var any = false
        var cuRanges: [(UInt64, UInt64, UInt32)] = []
        // Each session resumes at the offset where the last one stopped (dwarf_next_unit works on
        // offsets, not on one session's unit handles), so N units cost N header reads in all,
        // not N²/16 — a file with a million tiny units cannot stall the build.
        var offset: Dwarf_Off = only?.first ?? 0
        var nextListed = 1  // with `only`: the next listed unit after the current one
        var finished = only?.isEmpty ?? false
        var lineSections: LineSections?? = preparedLineSections  // read once, after libdw has inflated compressed sections
        while !finished {
            guard let dwarf = DWARFSession.begin(elf) else {
                if view != nil { viewRefused = true }  // the file itself may still be readable
                break
            }
            if lineSections == nil { lineSections = readsLineTables ? LineSections(elf) : nil }
            if let supplementary { dwarf_setalt(dwarf, supplementary.dwarf) }
            supDwarf = supplementary?.isDebugSup == true ? supplementary?.dwarf : nil
            finished = true
            var processed = 0
            var interned: Dwarf_Off = base  // with `only`: unit headers this session has read up to here
            while true {
                var nextOffset: Dwarf_Off = 0
                var headerSize = 0
                var version: Dwarf_Half = 0
                var abbrevOffset: Dwarf_Off = 0
                var addressSize: UInt8 = 0
                var offsetSize: UInt8 = 0
                if offset == .max { break }  // past the last listed unit
                // A view starts at the smallest listed unit: a unit before it is a caller's error,
                // answered by the file.
                if offset < base { viewRefused = true; break }
                // nil type signature/offset: non-nil would make libdw walk DWARF 4's .debug_types.
                guard
                    dwarf_next_unit(
                        dwarf, offset - base, &nextOffset, &headerSize, &version, &abbrevOffset,
                        &addressSize, &offsetSize, nil, nil) == 0
                else { break }
                // libdw adds the unit's length as the file gives it: near the top of the address
                // space the sum wraps, and the file's offset would overflow.
                let (fileNext, overflow) = nextOffset.addingReportingOverflow(base)
                guard !overflow else { break }
                nextOffset = fileNext
                if processed == DWARFIndexBuilder.unitsPerSession { finished = false; break }
                if let view, !view.refersOnlyWithinItself(abbreviationsAt: abbrevOffset) {
                    viewRefused = true
                    break
                }
                let unitOffset = offset
                guard nextOffset > unitOffset else { break }  // a corrupt length must not loop
                offset = nextOffset
                if let only {  // a partial index: jump to the next listed unit, or stop after this one
                    if nextListed < only.count { offset = only[nextListed]; nextListed += 1 } else { offset = .max }
                }
                processed += 1
                // A partial build (no releaser): the headers libdw would read before this unit, in steps.
                if only != nil && releaser == nil {
                    DWARFIndexBuilder.readUnitHeaders(dwarf, from: &interned, upTo: unitOffset, base: base, releasing: headerPages)
                }
                interned = max(interned, nextOffset)
                var cudie = Dwarf_Die()
                guard dwarf_offdie(dwarf, unitOffset - base + Dwarf_Off(headerSize), &cudie) != nil else { continue }
                var unitType: UInt8 = 0
                var splitDIE = Dwarf_Die()
                // Asking for the split DIE is what makes libdw open the .dwo its skeleton names.
                let info =
                    opensSplitUnits
                    ? dwarf_cu_info(cudie.cu, nil, &unitType, nil, &splitDIE, nil, nil, nil) : dwarf_cu_info(cudie.cu, nil, &unitType, nil, nil, nil, nil, nil)
                guard info == 0 else { continue }
                // Type units hold no code. A skeleton unit (split DWARF) keeps the line table and the
                // unit's ranges; its DIEs are in the split unit libdw finds in the .dwo named by
                // DW_AT_dwo_name (beside the file, else under DW_AT_comp_dir). libdw 0.188 reads no
                // .dwp packages: such a unit is left out and reported (lookups fall back to symbols).
                let isSkeleton = unitType == UInt8(DW_UT_skeleton)
                guard unitType == UInt8(DW_UT_compile) || unitType == UInt8(DW_UT_partial) || isSkeleton else { continue }
                if isSkeleton && splitDIE.cu == nil {
                    // A reference to a clang module's debug info (swiftc and clang -gmodules: a skeleton
                    // naming a .pcm, no code of its own) is not a missing unit: a SwiftPM build has dozens,
                    // and counting them kept every Swift binary's index from being persisted.
                    if DWARFIndexBuilder.isCodeFreeSkeleton(&cudie) { continue }
                    // The .dwo is missing (or not looked for): the skeleton's own line table and
                    // ranges, in this file, still give file and line, as llvm-symbolizer answers;
                    // functions then come from the symbol table.
                    missingSplitUnits.append(stringAttr(&cudie, DW_AT_dwo_name) ?? stringAttr(&cudie, DW_AT_GNU_dwo_name) ?? "?")
                }
                any = true
                let unit = UInt32(t.cuRowStart.count)
                if unitFirstScope.count > Int(unit) {
                    unitFirstScope[Int(unit)] = UInt32(t.scopeName.count)
                    unitFileOffset[Int(unit)] = UInt64(unitOffset)
                } else {
                    unitFirstScope.append(UInt32(t.scopeName.count))
                    unitFileOffset.append(UInt64(unitOffset))
                }
                var unitFiles = UnitFiles()
                let compDirC = cStringAttr(&cudie, DW_AT_comp_dir)
                let compDir = compDirC.map { String(cString: $0) }
                let rowStart = t.rowAddress.count
                var files = UnitFileTable.libdw(nil, 0)
                if !isSkeleton, let sections = lineSections ?? nil, let stmtList = udataAttr(&cudie, DW_AT_stmt_list),
                    let table = LineTableReader.read(sections, offset: stmtList, addressSize: Int(addressSize), compDir: compDirC, rows: &lineRows)
                {
                    lineTableUnits.own += 1
                    files = .decoded(table)
                    appendLines(lineRows, files: table, compDir: compDir, unitFiles: &unitFiles)
                } else {
                    // Skeleton units (their split unit's table), forms and values the reader does
                    // not model, corrupt tables: libdw.
                    if !isSkeleton { lineTableUnits.libdw += 1 }
                    var libdwFiles: OpaquePointer? = nil
                    var nfiles = 0
                    if dwarf_getsrcfiles(&cudie, &libdwFiles, &nfiles) != 0 { libdwFiles = nil }
                    files = .libdw(libdwFiles, nfiles)
                    readLines(&cudie, compDir: compDir, unitFiles: &unitFiles)
                }
                t.cuRowStart.append(UInt32(rowStart))
                t.cuRowEnd.append(UInt32(t.rowAddress.count))
                var own = DWARFIndexBuilder.unitRanges(&cudie)
                // A partial unit (dwz's shared DIEs) holds no code of its own: its DW_AT_stmt_list
                // names the table of a unit that does, whose addresses it must not claim.
                if own.isEmpty && unitType != UInt8(DW_UT_partial) { own = sequenceRanges(from: rowStart) }
                for (lo, hi) in own { cuRanges.append((lo, hi, unit)) }
                if isSkeleton && splitDIE.cu == nil {
                    // No split unit: no DIEs to walk.
                } else if isSkeleton {
                    // DW_AT_call_file indexes the split unit's own file table (.debug_line.dwo)
                    // when it has one; libdw gives the skeleton's otherwise.
                    var splitFiles: OpaquePointer? = nil
                    var nSplitFiles = 0
                    let split = dwarf_getsrcfiles(&splitDIE, &splitFiles, &nSplitFiles) == 0 ? UnitFileTable.libdw(splitFiles, nSplitFiles) : files
                    cacheOriginNames = false
                    walkDIEs(&splitDIE, files: split, compDir: compDir, unitFiles: &unitFiles)
                    cacheOriginNames = true
                } else {
                    walkDIEs(&cudie, files: files, compDir: compDir, unitFiles: &unitFiles)
                }
                releaser?.release(unitAt: unitOffset, end: nextOffset, lines: udataAttr(&cudie, DW_AT_stmt_list))
            }
            dwarf_end(dwarf)
            // Without a per-unit releaser (compressed sections: libdw inflated them on the heap),
            // drop the whole mapping after each session.
            if releasePages && releaser?.isUsable != true { DWARFIndexBuilder.releaseFilePages(elf) }
        }
        let segments = DWARFIndexBuilder.unitSegments(cuRanges, fileOffsets: unitFileOffset)
        unitsOverlap = unitsOverlap || segments.overlapping
        for (lo, hi, u) in segments.segments { t.cuLow.append(lo); t.cuHigh.append(hi); t.cuOfRange.append(u) }
        return any
    }

    /// Units' address ranges as sorted, non-overlapping segments, each naming the unit whose line
    /// table answers there. Where several units claim an address (identical code folded by the
    /// linker, LTO partitions) the first unit in the file (lowest `fileOffsets[unit]`) wins, as in
    /// llvm-symbolizer's address map.
    static func unitSegments(_ ranges: [(UInt64, UInt64, UInt32)], fileOffsets: [UInt64]) -> (
        segments: [(UInt64, UInt64, UInt32)], overlapping: Bool
    ) {
        // The common case, units that do not overlap, needs only the sort.
        let sorted = ranges.filter { $0.0 < $0.1 }.sorted { $0.0 < $1.0 }
        var end: UInt64 = 0
        var disjoint = true
        for r in sorted {
            if r.0 < end { disjoint = false; break }
            end = r.1
        }
        if disjoint { return (sorted, false) }
        func offset(_ u: UInt32) -> UInt64 { Int(u) < fileOffsets.count ? fileOffsets[Int(u)] : UInt64(u) }
        var points: [(at: UInt64, opens: Bool, unit: UInt32)] = []
        points.reserveCapacity(ranges.count * 2)
        for (lo, hi, u) in ranges where lo < hi { points.append((lo, true, u)); points.append((hi, false, u)) }
        points.sort { $0.at < $1.at }
        var open: [UInt32: Int] = [:]  // unit → ranges of it open here
        // The open units by file offset: a binary min-heap whose closed entries are dropped when
        // they surface, so a file with many nested units costs n log n, not n × open units.
        var heap: [(offset: UInt64, unit: UInt32)] = []
        func push(_ e: (offset: UInt64, unit: UInt32)) {
            heap.append(e)
            var c = heap.count - 1
            while c > 0 {
                let parent = (c - 1) / 2
                guard (heap[c].offset, heap[c].unit) < (heap[parent].offset, heap[parent].unit) else { break }
                heap.swapAt(c, parent)
                c = parent
            }
        }
        func popTop() {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            var p = 0
            while true {
                let l = 2 * p + 1, r = l + 1
                var m = p
                if l < heap.count && (heap[l].offset, heap[l].unit) < (heap[m].offset, heap[m].unit) { m = l }
                if r < heap.count && (heap[r].offset, heap[r].unit) < (heap[m].offset, heap[m].unit) { m = r }
                if m == p { break }
                heap.swapAt(p, m)
                p = m
            }
        }
        var out: [(UInt64, UInt64, UInt32)] = []
        var overlapping = false
        var i = 0
        while i < points.count {
            let x = points[i].at
            while i < points.count && points[i].at == x {
                let p = points[i]
                if p.opens {
                    let n = open[p.unit, default: 0]
                    open[p.unit] = n + 1
                    if n == 0 { push((offset(p.unit), p.unit)) }
                } else if let n = open[p.unit] {
                    open[p.unit] = n > 1 ? n - 1 : nil
                }
                i += 1
            }
            while let top = heap.first, open[top.unit] == nil { popTop() }
            guard i < points.count, let unit = heap.first?.unit else { continue }
            if open.count > 1 { overlapping = true }
            let next = points[i].at
            if let last = out.last, last.1 == x, last.2 == unit { out[out.count - 1].1 = next } else { out.append((x, next, unit)) }
        }
        return (out, overlapping)
    }

    /// Where units overlap, llvm-symbolizer reads an address's frames from the unit that wins it
    /// (its line table and its DIEs alike): the scope ranges of the other units are cut out there,
    /// so an inlined call's file is named relative to the same unit as the line. Addresses no
    /// unit claims keep every scope.
    mutating func keepWinningUnitsScopes() {
        guard unitsOverlap, !t.cuLow.isEmpty else { return }
        var kept: [ScopeRange] = []
        kept.reserveCapacity(ranges.count)
        func unit(of scope: UInt32) -> UInt32 {
            var lo = 0, hi = unitFirstScope.count
            while lo < hi { let mid = (lo + hi) >> 1; if unitFirstScope[mid] <= scope { lo = mid + 1 } else { hi = mid } }
            return UInt32(max(lo - 1, 0))
        }
        // Cutting can split a range once per segment it spans: past a bound the remaining ranges are
        // kept whole (a crafted file must not multiply the index; real ones stay far below it).
        let limit = 4 * ranges.count + 1024
        for r in ranges {
            if kept.count > limit { kept.append(r); continue }
            let own = unit(of: r.scope)
            // The first segment ending after r.low.
            var lo = 0, hi = t.cuLow.count
            while lo < hi { let mid = (lo + hi) >> 1; if t.cuHigh[mid] <= r.low { lo = mid + 1 } else { hi = mid } }
            var start = r.low
            var k = lo
            while k < t.cuLow.count && t.cuLow[k] < r.high && start < r.high {
                if t.cuOfRange[k] != own {
                    let cut = max(t.cuLow[k], start)
                    if cut > start { var piece = r; piece.low = start; piece.high = cut; kept.append(piece) }
                    start = max(start, min(t.cuHigh[k], r.high))
                }
                k += 1
            }
            if start < r.high { var piece = r; piece.low = start; kept.append(piece) }
        }
        ranges = kept
    }

    /// The parsed units' address ranges (root DIE, else line-table sequences), sorted and merged.
    func unitWindows() -> [(UInt64, UInt64)] {
        var out: [(UInt64, UInt64)] = []
        for i in t.cuLow.indices {  // sorted by low in walkUnits
            if let last = out.last, t.cuLow[i] <= last.1 { out[out.count - 1].1 = max(last.1, t.cuHigh[i]) } else { out.append((t.cuLow[i], t.cuHigh[i])) }
        }
        return out
    }

    /// libdw finds the handle of the unit at an offset by reading every unit header before it
    /// (`__libdw_findcu`), and each header read faults in a 64 KiB-or-more window of .debug_info:
    /// for a late unit of a large library that adds megabytes to our peak memory. Reading those headers
    /// here first lets the pages read so far be dropped every `headerPagesSpan` bytes of
    /// .debug_info (read-only file pages), that range alone: dropping the whole file's pages
    /// every few units cost a system call and a walk of the whole mapping each time.
    /// `base`: libdw's offsets count from there (a `DebugInfoView`); `offset` and `target` are the file's.
    static func readUnitHeaders(
        _ dwarf: OpaquePointer, from offset: inout Dwarf_Off, upTo target: Dwarf_Off, base: Dwarf_Off = 0, releasing pages: UnitPageReleaser?
    ) {
        guard offset < target, offset >= base else { return }
        var kept = offset  // .debug_info from here on may still be resident
        while offset < target {
            var next: Dwarf_Off = 0
            var headerSize = 0
            guard dwarf_next_unit(dwarf, offset - base, &next, &headerSize, nil, nil, nil, nil, nil, nil) == 0 else { break }
            let (fileNext, overflow) = next.addingReportingOverflow(base)  // a length from the file
            guard !overflow, fileNext > offset else { break }
            next = fileNext
            var die = Dwarf_Die()
            _ = dwarf_offdie(dwarf, offset - base + Dwarf_Off(headerSize), &die)  // interns the units up to this one
            offset = next
            if offset - kept >= DWARFIndexBuilder.headerPagesSpan { pages?.releaseInfo(from: kept, to: offset); kept = offset }
        }
        pages?.releaseInfo(from: kept, to: offset)
    }

    /// Bytes of .debug_info whose unit headers are read between two releases of their pages.
    static let headerPagesSpan: Dwarf_Off = 512 * 1024

    /// Whether libelf's image of the file is its mapping (page-aligned, as mmap returns it) rather
    /// than a heap copy it read when mapping failed: MADV_DONTNEED on a heap copy would zero it.
    static func isMappedFile(_ base: UnsafeMutableRawPointer) -> Bool {
        UInt(bitPattern: base) % UInt(sysconf(Int32(_SC_PAGESIZE))) == 0
    }

    /// Drops the resident pages of the ELF image libelf mapped (read-only, so nothing is lost):
    /// the DWARF just parsed is not read again, and peak memory stays below llvm-symbolizer's.
    /// Later reads fault the pages back in from the page cache.
    static func releaseFilePages(_ elf: OpaquePointer) {
        var size = 0
        guard let p = elf_rawfile(elf, &size), size > 0, isMappedFile(p) else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = UInt(bitPattern: p) & ~UInt(page - 1)
        let end = UInt(bitPattern: p) + UInt(size)
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start), MADV_DONTNEED)
    }

    /// Address 0 and the tombstones (-1, -2) mark code the linker discarded.
    @inline(__always) static func isLive(_ lo: UInt64, _ hi: UInt64) -> Bool {
        lo != 0 && lo < hi && lo < UInt64.max - 1
    }

    /// A skeleton unit that claims no address range and whose line table has no row: it only
    /// points at types (a clang module's .pcm). A -gsplit-dwarf skeleton has both.
    static func isCodeFreeSkeleton(_ cudie: inout Dwarf_Die) -> Bool {
        guard unitRanges(&cudie).isEmpty else { return false }
        var lines: OpaquePointer? = nil
        var n = 0
        return dwarf_getsrclines(&cudie, &lines, &n) != 0 || n == 0
    }

    static func unitRanges(_ die: inout Dwarf_Die) -> [(UInt64, UInt64)] {
        var out: [(UInt64, UInt64)] = []
        var base: Dwarf_Addr = 0, lo: Dwarf_Addr = 0, hi: Dwarf_Addr = 0
        var off = dwarf_ranges(&die, 0, &base, &lo, &hi)
        while off > 0 {
            if DWARFIndexBuilder.isLive(lo, hi) { out.append((lo, hi)) }
            off = dwarf_ranges(&die, off, &base, &lo, &hi)
        }
        return out
    }

    /// A compile unit without DW_AT_ranges/low_pc still covers its line-table sequences.
    private func sequenceRanges(from rowStart: Int) -> [(UInt64, UInt64)] {
        var out: [(UInt64, UInt64)] = []
        var seqStart: UInt64? = nil
        for i in rowStart..<t.rowAddress.count {
            if t.rowFile[i] == IndexTables.none {
                if let s = seqStart, DWARFIndexBuilder.isLive(s, t.rowAddress[i]) { out.append((s, t.rowAddress[i])) }
                seqStart = nil
            } else if seqStart == nil {
                seqStart = t.rowAddress[i]
            }
        }
        return out
    }

    // MARK: Lines and files

    private mutating func readLines(_ cudie: inout Dwarf_Die, compDir: String?, unitFiles: inout UnitFiles) {
        var lines: OpaquePointer? = nil
        var n = 0
        guard dwarf_getsrclines(&cudie, &lines, &n) == 0, let lines else { return }
        var addr: Dwarf_Addr = 0
        var lineno: Int32 = 0, col: Int32 = 0
        var end = false
        var files: OpaquePointer? = nil
        var idx = 0
        // The unit's rows go to plain buffers first, then to the tables in one copy per column
        // (four appends per row, each checking uniqueness and capacity, were ~4% of a full build).
        let addresses = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: n)
        let fileNumbers = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: n)
        let lineNumbers = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: n)
        let columns = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: n)
        defer { addresses.deallocate(); fileNumbers.deallocate(); lineNumbers.deallocate(); columns.deallocate() }
        var k = 0
        // libdw sorts a unit's rows by address, an end-of-sequence row before a row starting at
        // the same address, and keeps the table's order otherwise; lookups rely on that.
        for i in 0..<n {
            guard let l = dwarf_onesrcline(lines, i), dwarf_lineaddr(l, &addr) == 0 else { continue }
            end = false
            _ = dwarf_lineendsequence(l, &end)
            var file = IndexTables.none
            if !end {
                if dwarf_line_file(l, &files, &idx) == 0, let files {
                    file = fileRef(.libdw(files, idx + 1), idx, compDir: compDir, unitFiles: &unitFiles)
                } else {
                    file = fileRef(path: "??", unitFiles: &unitFiles, key: -1)
                }
            }
            lineno = 0; col = 0
            _ = dwarf_lineno(l, &lineno)
            _ = dwarf_linecol(l, &col)
            addresses[k] = addr
            fileNumbers[k] = file
            lineNumbers[k] = UInt32(clamping: lineno)
            columns[k] = UInt32(clamping: col)
            k += 1
        }
        t.rowAddress.append(contentsOf: UnsafeBufferPointer(rebasing: addresses[..<k]))
        t.rowFile.append(contentsOf: UnsafeBufferPointer(rebasing: fileNumbers[..<k]))
        t.rowLine.append(contentsOf: UnsafeBufferPointer(rebasing: lineNumbers[..<k]))
        t.rowColumn.append(contentsOf: UnsafeBufferPointer(rebasing: columns[..<k]))
    }

    /// Rows `LineTableReader` decoded, appended as `readLines` appends libdw's.
    private mutating func appendLines(_ rows: [LineRow], files: LineFileTable, compDir: String?, unitFiles: inout UnitFiles) {
        let n = rows.count
        let table = UnitFileTable.decoded(files)
        if t.rowAddress.capacity == 0 {
            // The first unit (a one-address run's only one), when no room was reserved, fills the
            // index's own columns: no scratch pages to fault in and no copy of them.
            var fileNumbers: [UInt32] = []
            t.rowAddress = [UInt64](unsafeUninitializedCapacity: n) { addresses, filled in
                fileNumbers = [UInt32](unsafeUninitializedCapacity: n) { numbers, numbered in
                    for i in 0..<n {
                        addresses[i] = rows[i].address
                        numbers[i] = rowFile(rows[i], table, fileCount: files.count, compDir: compDir, unitFiles: &unitFiles)
                    }
                    numbered = n
                }
                filled = n
            }
            t.rowFile = fileNumbers
            t.rowLine = rows.map { UInt32(clamping: $0.line) }
            t.rowColumn = rows.map { UInt32($0.column) }
            return
        }
        // The columns are filled in scratch buffers kept from unit to unit: a buffer allocated per
        // unit is a fresh mapping for a large unit, whose pages fault in again every time.
        if scratchColumns.capacity < n { scratchColumns.grow(to: n) }
        let addresses = scratchColumns.addresses, fileNumbers = scratchColumns.files
        let lineNumbers = scratchColumns.lines, columns = scratchColumns.columns
        for i in 0..<n {
            let r = rows[i]
            addresses[i] = r.address
            fileNumbers[i] = rowFile(r, table, fileCount: files.count, compDir: compDir, unitFiles: &unitFiles)
            lineNumbers[i] = UInt32(clamping: r.line)
            columns[i] = UInt32(r.column)
        }
        t.rowAddress.append(contentsOf: addresses[0..<n])
        t.rowFile.append(contentsOf: fileNumbers[0..<n])
        t.rowLine.append(contentsOf: lineNumbers[0..<n])
        t.rowColumn.append(contentsOf: columns[0..<n])
    }

    /// A line row's file in the index's file table (none for an end-of-sequence row).
    @inline(__always)
    private mutating func rowFile(_ r: LineRow, _ table: UnitFileTable, fileCount: Int, compDir: String?, unitFiles: inout UnitFiles) -> UInt32 {
        if r.isEnd { return IndexTables.none }
        if let known = unitFiles[Int(r.file)] { return known }
        if Int(r.file) < fileCount { return fileRef(table, Int(r.file), compDir: compDir, unitFiles: &unitFiles) }
        return fileRef(path: "??", unitFiles: &unitFiles, key: -1)  // as dwarf_line_file fails
    }

    private mutating func fileRef(_ files: UnitFileTable, _ idx: Int, compDir: String?, unitFiles: inout UnitFiles) -> UInt32 {
        if let f = unitFiles[idx] { return f }
        guard let p = files.printedPath(idx, compDir: compDir) else { return fileRef(path: "??", unitFiles: &unitFiles, key: idx) }
        return fileRef(path: p, unitFiles: &unitFiles, key: idx)
    }

    /// The unit's directory table as libdw reads it (DWARF < 5: entry 0 is DW_AT_comp_dir; DWARF 5:
    /// the table's own first entry).
    static func directories(_ files: OpaquePointer) -> [String] {
        var dirs: UnsafePointer<UnsafePointer<CChar>?>? = nil
        var n = 0
        guard dwarf_getsrcdirs(files, &dirs, &n) == 0, let dirs else { return [] }
        return (0..<n).map { dirs[$0].map { String(cString: $0) } ?? "" }
    }

    private mutating func fileRef(path: String, unitFiles: inout UnitFiles, key: Int) -> UInt32 {
        let s = pool.intern(path)
        let f: UInt32
        if let existing = fileIndex[s] {
            f = existing
        } else {
            f = UInt32(t.files.count)
            t.files.append(s)
            fileIndex[s] = f
        }
        unitFiles[key] = f
        return f
    }

    /// Relative paths join the unit's DW_AT_comp_dir; doubled slashes collapse, as llvm prints
    /// them (libdw turns swiftc's `<compiler-generated>` into `//<compiler-generated>`).
    static func normalize(_ path: String, compDir: String?) -> String {
        var p = path
        if !p.hasPrefix("/"), let compDir, !compDir.isEmpty { p = compDir + "/" + p }
        guard p.utf8.count > 1, p.contains("//") else { return p }
        var out: [UInt8] = []
        out.reserveCapacity(p.utf8.count)
        for c in p.utf8 where !(c == UInt8(ascii: "/") && out.last == UInt8(ascii: "/")) { out.append(c) }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Scopes

    /// The attribute's string where libdw keeps it (valid until the session's dwarf_end).
    private func cStringAttr(_ die: inout Dwarf_Die, _ name: Int) -> UnsafePointer<CChar>? {
        var attr = Dwarf_Attribute()
        guard dwarf_attr(&die, UInt32(name), &attr) != nil else { return nil }
        return dwarf_formstring(&attr)
    }

    private func stringAttr(_ die: inout Dwarf_Die, _ name: Int) -> String? {
        var attr = Dwarf_Attribute()
        guard dwarf_attr(&die, UInt32(name), &attr) != nil, let s = dwarf_formstring(&attr) else { return nil }
        return String(cString: s)
    }

    private func udataAttr(_ die: inout Dwarf_Die, _ name: Int) -> UInt64? {
        var attr = Dwarf_Attribute()
        var v: Dwarf_Word = 0
        guard dwarf_attr(&die, UInt32(name), &attr) != nil, dwarf_formudata(&attr, &v) == 0 else { return nil }
        return v
    }

    /// The name llvm-symbolizer shows: the linkage name through abstract origins and
    /// specifications (plain dwarf_attr is NULL on inlined DIEs), else DW_AT_name (the artificial
    /// `Swift runtime failure: …` frame has only that).
    private mutating func scopeName(_ die: inout Dwarf_Die) -> UInt32 {
        if let supDwarf { return supScopeName(&die, supDwarf) }
        // An inlined instance (or a concrete copy) without a name of its own is named by its abstract
        // origin, which many instances share (a small inline function is inlined thousands of times):
        // resolve each origin once. Only references into this file (not dwz's DW_FORM_GNU_ref_alt),
        // so the origin's offset identifies it.
        var attr = Dwarf_Attribute()
        if cacheOriginNames, dwarf_hasattr(&die, UInt32(DW_AT_linkage_name)) == 0, dwarf_hasattr(&die, UInt32(DW_AT_MIPS_linkage_name)) == 0,
            dwarf_hasattr(&die, UInt32(DW_AT_name)) == 0, dwarf_attr(&die, UInt32(DW_AT_abstract_origin), &attr) != nil,
            DWARFIndexBuilder.isReferenceIntoThisFile(attr.form)
        {
            var origin = Dwarf_Die()
            if dwarf_formref_die(&attr, &origin) != nil {
                let key = dwarf_dieoffset(&origin)
                if let known = originNames[key] { return known }
                let name = uncachedScopeName(&origin)
                originNames[key] = name
                return name
            }
        }
        return uncachedScopeName(&die)
    }

    @inline(__always) static func isReferenceIntoThisFile(_ form: UInt32) -> Bool {
        switch Int(form) {
        case DW_FORM_ref1, DW_FORM_ref2, DW_FORM_ref4, DW_FORM_ref8, DW_FORM_ref_udata, DW_FORM_ref_addr: return true
        default: return false
        }
    }

    private mutating func uncachedScopeName(_ die: inout Dwarf_Die) -> UInt32 {
        var attr = Dwarf_Attribute()
        for a in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name] {
            if dwarf_attr_integrate(&die, UInt32(a), &attr) != nil, let s = dwarf_formstring(&attr) {
                return pool.intern(cString: s)
            }
        }
        if let s = dwarf_diename(&die) { return pool.intern(cString: s) }
        return IndexTables.none
    }

    /// `scopeName` for a file with a DWARF 5 supplementary file (`.debug_sup`): libdw 0.188's
    /// dwarf_formref_die reads DW_FORM_ref_sup4/8 as offsets into the file's *own* .debug_info (only
    /// DW_FORM_GNU_ref_alt goes to the alt file), so dwarf_attr_integrate would follow them to the
    /// wrong DIE. Here the abstract-origin / specification chain is followed by hand, ref_sup
    /// offsets into the supplementary file; then the first linkage name, else the first name.
    private mutating func supScopeName(_ die: inout Dwarf_Die, _ sup: OpaquePointer) -> UInt32 {
        var chain = [die]
        var attr = Dwarf_Attribute()
        var next = Dwarf_Die()
        while chain.count < 16 {
            var cur = chain[chain.count - 1]
            guard
                dwarf_attr(&cur, UInt32(DW_AT_abstract_origin), &attr) != nil
                    || dwarf_attr(&cur, UInt32(DW_AT_specification), &attr) != nil
            else { break }
            if attr.form == UInt32(DW_FORM_ref_sup4) || attr.form == UInt32(DW_FORM_ref_sup8) {
                guard let p = attr.valp else { break }
                let size = attr.form == UInt32(DW_FORM_ref_sup4) ? 4 : 8
                var off: UInt64 = 0
                for i in 0..<size { off |= UInt64(p[i]) << (8 * UInt64(i)) }  // x86-64/aarch64: little-endian
                guard dwarf_offdie(sup, off, &next) != nil else { break }
            } else if dwarf_formref_die(&attr, &next) == nil {
                break
            }
            chain.append(next)
        }
        for a in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name] {
            for i in chain.indices {
                var d = chain[i]
                if dwarf_attr(&d, UInt32(a), &attr) != nil, let s = dwarf_formstring(&attr) { return pool.intern(cString: s) }
            }
        }
        return IndexTables.none
    }

    /// Tags whose children never hold code: skipped without entering.
    @inline(__always) private static func isLeafTag(_ tag: Int) -> Bool {
        switch tag {
        case DW_TAG_formal_parameter, DW_TAG_variable, DW_TAG_member, DW_TAG_base_type, DW_TAG_pointer_type,
            DW_TAG_reference_type, DW_TAG_rvalue_reference_type, DW_TAG_const_type, DW_TAG_volatile_type,
            DW_TAG_restrict_type, DW_TAG_typedef, DW_TAG_array_type, DW_TAG_subrange_type,
            DW_TAG_enumeration_type, DW_TAG_enumerator, DW_TAG_subroutine_type, DW_TAG_unspecified_parameters,
            DW_TAG_call_site, DW_TAG_call_site_parameter, DW_TAG_GNU_call_site, DW_TAG_GNU_call_site_parameter,
            DW_TAG_label, DW_TAG_template_type_parameter, DW_TAG_template_value_parameter,
            DW_TAG_inheritance, DW_TAG_ptr_to_member_type, DW_TAG_imported_declaration,
            DW_TAG_imported_module, DW_TAG_unspecified_type, DW_TAG_atomic_type, DW_TAG_dwarf_procedure:
            return true
        default:
            return false
        }
    }

    /// C has no member functions: a C unit's structure, union and class types hold no code, and
    /// not entering them skips most of the DIEs of a C library's units (every unit repeats the
    /// headers' types; on the Python library ~X% of a full build).
    /// A subprogram without code of its own whose children may still have some: an abstract
    /// instance (DW_AT_inline), or one with no address attribute and not a declaration (swiftc's
    /// abstract origins carry no DW_AT_inline). Declarations and functions the linker dropped
    /// (an address attribute whose range is dead) are not searched.
    static func mayHoldOutOfLineCode(_ die: inout Dwarf_Die) -> Bool {
        if dwarf_hasattr(&die, UInt32(DW_AT_inline)) != 0 { return true }
        return dwarf_hasattr(&die, UInt32(DW_AT_declaration)) == 0 && dwarf_hasattr(&die, UInt32(DW_AT_low_pc)) == 0
            && dwarf_hasattr(&die, UInt32(DW_AT_ranges)) == 0
    }

    static func typesHoldNoCode(_ cudie: inout Dwarf_Die) -> Bool {
        var attr = Dwarf_Attribute()
        var language: Dwarf_Word = 0
        guard dwarf_attr(&cudie, UInt32(DW_AT_language), &attr) != nil, dwarf_formudata(&attr, &language) == 0 else { return false }
        switch Int(language) {
        case DW_LANG_C, DW_LANG_C89, DW_LANG_C99, DW_LANG_C11, 0x2c /* DW_LANG_C17 */: return true
        default: return false
        }
    }

    private mutating func walkDIEs(
        _ cudie: inout Dwarf_Die, files: UnitFileTable,
        compDir: String?, unitFiles: inout UnitFiles
    ) {
        let skipTypes = DWARFIndexBuilder.typesHoldNoCode(&cudie)
        // Explicit stack: Swift's optimised code can nest deeply, and recursion per DIE is costly.
        var stack: [(die: Dwarf_Die, scope: UInt32, depth: Int32)] = []
        var first = Dwarf_Die()
        if dwarf_child(&cudie, &first) == 0 { stack.append((first, IndexTables.none, 0)) }
        var base: Dwarf_Addr = 0, lo: Dwarf_Addr = 0, hi: Dwarf_Addr = 0
        var child = Dwarf_Die()
        var sibling = Dwarf_Die()
        var dieRanges: [(UInt64, UInt64)] = []
        while let top = stack.popLast() {
            var die = top.die
            while true {
                let tag = Int(dwarf_tag(&die))
                if tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine {
                    dieRanges.removeAll(keepingCapacity: true)
                    var off = dwarf_ranges(&die, 0, &base, &lo, &hi)
                    while off > 0 {
                        if DWARFIndexBuilder.isLive(lo, hi) { dieRanges.append((lo, hi)) }
                        off = dwarf_ranges(&die, off, &base, &lo, &hi)
                    }
                    // Declarations and abstract instances have no code; their concrete copies do.
                    if !dieRanges.isEmpty {
                        let inlined = tag == DW_TAG_inlined_subroutine && top.scope != IndexTables.none
                        let scope = UInt32(t.scopeName.count)
                        t.scopeName.append(scopeName(&die))
                        t.scopeParent.append(inlined ? top.scope : IndexTables.none)
                        t.scopeFlags.append(inlined ? IndexTables.scopeIsInlined : 0)
                        var callFile = IndexTables.none
                        if inlined, let f = udataAttr(&die, DW_AT_call_file), f < UInt64(files.count) {
                            callFile = fileRef(files, Int(f), compDir: compDir, unitFiles: &unitFiles)
                        }
                        t.scopeCallFile.append(callFile)
                        t.scopeCallLine.append(UInt32(clamping: inlined ? (udataAttr(&die, DW_AT_call_line) ?? 0) : 0))
                        t.scopeCallColumn.append(UInt32(clamping: inlined ? (udataAttr(&die, DW_AT_call_column) ?? 0) : 0))
                        // A nested out-of-line subprogram (GCC local classes) is a root of its own.
                        let depth: Int32 = inlined ? top.depth + 1 : 0
                        for (l, h) in dieRanges { ranges.append(ScopeRange(low: l, high: h, scope: scope, depth: depth)) }
                        if dwarf_child(&die, &child) == 0 { stack.append((child, scope, depth)) }
                    } else if !skipTypes, DWARFIndexBuilder.mayHoldOutOfLineCode(&die), dwarf_child(&die, &child) == 0 {
                        // An abstract instance (DW_AT_inline; not a declaration, not a function
                        // the linker dropped) has no code, but a C++ one may hold a local class
                        // whose member functions do (a lambda's `_FUN` in a function template):
                        // out-of-line roots of their own, as llvm-symbolizer finds them.
                        stack.append((child, IndexTables.none, 0))
                    }
                } else if !DWARFIndexBuilder.isLeafTag(tag)
                    && !(skipTypes && (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type))
                {
                    // Namespaces, modules, lexical blocks, classes: no frame of their own, but
                    // they contain functions (swiftc puts them in DW_TAG_module).
                    if dwarf_child(&die, &child) == 0 { stack.append((child, top.scope, top.depth)) }
                }
                guard dwarf_siblingof(&die, &sibling) == 0 else { break }
                die = sibling
            }
        }
    }

    /// Orders scope ranges for `flattenScopes`. The two-thread build sorts each half on its own
    /// thread first: the merged array is then two sorted runs, which the (run-detecting) sort
    /// merges in linear time on the serial tail.
    mutating func sortRanges() {
        ranges.sort {
            if $0.low != $1.low { return $0.low < $1.low }
            if $0.depth != $1.depth { return $0.depth < $1.depth }  // outer scope first
            if $0.high != $1.high { return $0.high > $1.high }
            return $0.scope < $1.scope
        }
    }

    /// Turns nested scope ranges into non-overlapping segments, each naming its innermost scope.
    mutating func flattenScopes() {
        keepWinningUnitsScopes()
        sortRanges()
        var starts: [UInt64] = []
        var scopes: [UInt32] = []
        starts.reserveCapacity(ranges.count * 2)
        scopes.reserveCapacity(ranges.count * 2)
        func emit(_ a: UInt64, _ s: UInt32) {
            if let last = starts.last, last == a { starts.removeLast(); scopes.removeLast() }
            if let last = scopes.last, last == s { return }
            starts.append(a); scopes.append(s)
        }
        var open: [(high: UInt64, scope: UInt32)] = []
        func close(upTo x: UInt64) {
            while let top = open.last, top.high <= x {
                let h = top.high
                open.removeLast()
                // Entries hidden under the one just closed may have ended already.
                while let t = open.last, t.high <= h { open.removeLast() }
                emit(h, open.last?.scope ?? IndexTables.none)
            }
        }
        for r in ranges {
            close(upTo: r.low)
            open.append((r.high, r.scope))
            emit(r.low, r.scope)
        }
        close(upTo: UInt64.max)
        t.segmentStart = starts
        t.segmentScope = scopes
        ranges = []
    }

    // MARK: ELF symbols

    /// The symbols llvm-symbolizer uses: functions, objects, ifuncs and untyped labels defined
    /// in a section; one per address (see the sort below for which).
    /// - Parameter windows: sorted, disjoint address ranges a partial index answers for (see
    ///   `build(symbolsForUnitsOnly:)`); nil reads every symbol.
    mutating func readSymbols(_ sources: [ELFHandle], deduplicate: Bool, windows: [(UInt64, UInt64)]? = nil) {
        var chosen: [SymbolEntry] = []
        // The first table with any symbol that can name an address, whether or not any of them
        // is kept for `windows`: a partial index never takes the next table's symbols instead.
        search: for type in [SHT_SYMTAB, SHT_DYNSYM] {
            for src in sources {
                if let windows {
                    let (kept, any) = DWARFIndexBuilder.symbols(of: src, type: UInt32(type), naming: windows)
                    if any { chosen = kept; break search }
                } else {
                    chosen = DWARFIndexBuilder.symbols(of: src, type: UInt32(type))
                    if !chosen.isEmpty { break search }
                }
            }
        }
        // llvm-symbolizer sorts by (address, size) stably and keeps the last of each address:
        // the largest symbol, and among equals the one latest in the table (a GLOBAL after its
        // `.localalias`, the later of two identical-code-folded functions). The table index in
        // the key makes the order total, so one in-place sort of plain keys does it (a sort of
        // indices through a closure over tuples cost a few ms on a cold one-address run).
        var keys = [(UInt64, UInt64, Int)]()
        keys.reserveCapacity(chosen.count)
        for (i, c) in chosen.enumerated() { keys.append((c.0, c.1, i)) }
        keys.sort { $0 < $1 }
        var noFiles = UnitFiles()
        // Locals of one object file share their STT_FILE name pointer: look each up once.
        var fileOfName: [UnsafeRawPointer: UInt32] = [:]
        t.symbolAddress.reserveCapacity(keys.count)
        t.symbolSize.reserveCapacity(keys.count)
        t.symbolName.reserveCapacity(keys.count)
        t.symbolFile.reserveCapacity(keys.count)
        for (k, key) in keys.enumerated() where k == keys.count - 1 || keys[k + 1].0 != key.0 {
            let s = chosen[key.2]
            t.symbolAddress.append(s.0)
            t.symbolSize.append(s.1)
            t.symbolName.append(deduplicate ? pool.intern(cString: s.2) : pool.append(cString: s.2))
            var file = IndexTables.none
            if let f = s.3 {
                if let known = fileOfName[UnsafeRawPointer(f)] {
                    file = known
                } else {
                    file = fileRef(path: String(cString: f), unitFiles: &noFiles, key: 0)
                    fileOfName[UnsafeRawPointer(f)] = file
                }
            }
            t.symbolFile.append(file)
        }
    }

    /// A symbol as the index takes it: address, size, name and, for a local, its STT_FILE's name.
    /// Names point into the ELF image, valid while its file stays open.
    typealias SymbolEntry = (UInt64, UInt64, UnsafePointer<CChar>, UnsafePointer<CChar>?)

    /// The symbols of one table a lookup inside `windows` can pick (the last symbol at or below
    /// the address): those starting inside a window, then those at the highest address below
    /// each window's start, each group in table order; and whether the table has any symbol at all.
    /// Two passes over the table in place, reading only the names of the symbols kept or
    /// compared: a one-address run reads a few names of a large library's table instead of
    /// copying every entry (and touching every name) first.
    static func symbols(of file: ELFHandle, type: UInt32, naming windows: [(UInt64, UInt64)]) -> (kept: [SymbolEntry], any: Bool) {
        var any = false
        var kept: [SymbolEntry] = []
        var below = [UInt64?](repeating: nil, count: windows.count)  // highest symbol address below each window
        forEachSymbol(of: file, type: type) { value, entry in
            // The first window starting above the symbol; the one before it may contain it.
            var lo = 0, hi = windows.count
            while lo < hi { let mid = (lo + hi) >> 1; if windows[mid].0 <= value { lo = mid + 1 } else { hi = mid } }
            if lo > 0 && value < windows[lo - 1].1 {
                if let e = entry() { kept.append(e); any = true }
            } else if lo < windows.count, below[lo].map({ $0 < value }) ?? true {
                if entry() != nil { below[lo] = value; any = true }
            } else if !any {
                any = entry() != nil
            }
        }
        let edges = below.compactMap { $0 }.sorted()  // a sorted array: one generic Set type less to instantiate
        if !edges.isEmpty {
            forEachSymbol(of: file, type: type) { value, entry in
                var lo = 0, hi = edges.count
                while lo < hi { let mid = (lo + hi) >> 1; if edges[mid] < value { lo = mid + 1 } else { hi = mid } }
                if lo < edges.count && edges[lo] == value, let e = entry() { kept.append(e) }
            }
        }
        return (kept, any)
    }

    /// Every symbol of the table that can name an address, in table order.
    private static func symbols(of file: ELFHandle, type: UInt32) -> [SymbolEntry] {
        var out: [SymbolEntry] = []
        forEachSymbol(of: file, type: type, entries: { out.reserveCapacity(out.count + $0) }) { _, entry in
            if let e = entry() { out.append(e) }
        }
        return out
    }

    /// Calls `visit` with the address of each symbol of `file`'s tables of `type` whose kind and
    /// section can name an address, in table order; `visit` calls `entry()` for the symbols it
    /// wants, which reads the name and gives the entry, or nil when the symbol has no usable name.
    /// For local symbols the file is the name of the STT_FILE symbol before them (the ELF spec
    /// puts a file's locals after its STT_FILE entry). `entries` hears each table's size first.
    private static func forEachSymbol(
        of file: ELFHandle, type: UInt32, entries: (Int) -> Void = { _ in }, _ visit: (UInt64, () -> SymbolEntry?) -> Void
    ) {
        let sections = file.sections()
        // A symbol in a section that is not loaded (.debug_info's local labels, .comment) has no
        // address: its value is an offset in that section. llvm-symbolizer ignores such symbols.
        var loaded = [Bool](repeating: false, count: (sections.map { Int(elf_ndxscn($0.scn)) }.max() ?? 0) + 1)
        for s in sections where s.header.sh_flags & UInt64(SHF_ALLOC) != 0 { loaded[Int(elf_ndxscn(s.scn))] = true }
        for s in sections where s.header.sh_type == type && s.header.sh_entsize > 0 {
            guard let data = elf_getdata(s.scn, nil) else { continue }
            let strings = StringTable(file.elf, section: Int(s.header.sh_link))
            // The name offset of the last STT_FILE symbol, read only when a local after it is kept.
            // An empty STT_FILE name ends the previous file's locals without naming one.
            var currentFile: UInt32? = nil
            func take(_ value: UInt64, _ size: UInt64, _ nameOffset: UInt32, _ info: UInt8, _ shndx: UInt16) {
                let kind = Int32(info & 0xf)
                if kind == STT_FILE {
                    currentFile = nameOffset
                    return
                }
                guard kind == STT_FUNC || kind == STT_OBJECT || kind == STT_NOTYPE || kind == STT_GNU_IFUNC else { return }
                guard Int32(shndx) != SHN_UNDEF, Int32(shndx) < SHN_LORESERVE || Int32(shndx) == SHN_XINDEX else { return }
                if Int32(shndx) < SHN_LORESERVE && (Int(shndx) >= loaded.count || !loaded[Int(shndx)]) { return }
                let fileName = currentFile
                visit(value) {
                    guard nameOffset != 0, let name = strings.string(at: nameOffset), name.pointee != 0 else { return nil }
                    // ARM/AArch64 mapping symbols ($a, $d, $x) are not names.
                    if kind == STT_NOTYPE && name.pointee == CChar(UInt8(ascii: "$")) { return nil }
                    guard Int32(info >> 4) == STB_LOCAL, let f = fileName, let path = strings.string(at: f), path.pointee != 0 else {
                        return (value, size, name, nil)
                    }
                    return (value, size, name, path)
                }
            }
            // ELF64 in this machine's byte order (libelf has converted the section to it): read the
            // table in place; gelf_getsym's copy per entry was a visible share of a cold run.
            if gelf_getclass(file.elf) == ELFCLASS64, s.header.sh_entsize == UInt64(MemoryLayout<Elf64_Sym>.stride),
                let base = data.pointee.d_buf, Int(bitPattern: base) % MemoryLayout<Elf64_Sym>.alignment == 0
            {
                let table = UnsafeBufferPointer(
                    start: base.assumingMemoryBound(to: Elf64_Sym.self),
                    count: data.pointee.d_size / MemoryLayout<Elf64_Sym>.stride)
                entries(table.count)
                for sym in table { take(sym.st_value, sym.st_size, sym.st_name, sym.st_info, sym.st_shndx) }
            } else {
                let n = Int(s.header.sh_size / s.header.sh_entsize)
                var sym = GElf_Sym()
                for i in 0..<n where gelf_getsym(data, Int32(i), &sym) != nil {
                    take(sym.st_value, sym.st_size, sym.st_name, sym.st_info, sym.st_shndx)
                }
            }
        }
    }
}

/// A string table section read in place: names are pointers into the mapped file, checked once
/// (the section ends in NUL, so every offset inside it starts a terminated string) instead of
/// by elf_strptr per symbol. Falls back to elf_strptr when the section cannot be read so.
struct StringTable {
    private let elf: OpaquePointer
    private let section: Int
    private let base: UnsafePointer<CChar>?
    private let size: Int

    init(_ elf: OpaquePointer, section: Int) {
        self.elf = elf
        self.section = section
        if let scn = elf_getscn(elf, section), let data = elf_getdata(scn, nil), let buf = data.pointee.d_buf,
            data.pointee.d_size > 0, buf.load(fromByteOffset: data.pointee.d_size - 1, as: UInt8.self) == 0
        {
            base = UnsafePointer(buf.assumingMemoryBound(to: CChar.self))
            size = data.pointee.d_size
        } else {
            base = nil
            size = 0
        }
    }

    func string(at offset: UInt32) -> UnsafePointer<CChar>? {
        if let base { return Int(offset) < size ? base + Int(offset) : nil }
        return elf_strptr(elf, section, Int(offset)).map { UnsafePointer($0) }
    }
}

/// Releases, after each unit, the resident pages of its own bytes of .debug_info and .debug_line
/// (read-only file pages: nothing is lost; a later read faults them back from the page cache).
/// Why per unit and not the whole mapping per session: with the two-thread build each thread's
/// whole-file release zapped the pages the other was reading (wall time lost to refaults and
/// mmap-lock contention); the per-unit ranges of the two threads are
/// disjoint (inward to whole pages), and the sections every unit reads stay resident.
/// Adjacent units (the two-thread build hands out runs of them) are released together: each
/// madvise costs a TLB shootdown on the other thread's CPU, ~3% of a two-thread build when it
/// came once per unit.
final class UnitPageReleaser {
    private let info: (file: UnsafeRawPointer, size: Int)?
    private let line: (file: UnsafeRawPointer, size: Int)?
    private let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// Not yet released: [start, end) of each section, and how many units they span.
    private var pendingInfo: (start: Int, end: Int)? = nil
    private var pendingLine: (start: Int, end: Int)? = nil
    private var pendingUnits = 0
    static let unitsPerRelease = 8

    /// Both sections present and stored uncompressed in the mapped file.
    var isUsable: Bool { info != nil }

    init(_ elf: OpaquePointer) {
        var mappedSize = 0
        guard let base = elf_rawfile(elf, &mappedSize), mappedSize > 0, DWARFIndexBuilder.isMappedFile(base) else { info = nil; line = nil; return }
        var shstrndx = 0
        guard elf_getshdrstrndx(elf, &shstrndx) == 0 else { info = nil; line = nil; return }
        var foundInfo: (UnsafeRawPointer, Int)? = nil, foundLine: (UnsafeRawPointer, Int)? = nil
        var scn: OpaquePointer? = nil
        while let next = elf_nextscn(elf, scn) {
            scn = next
            var header = GElf_Shdr()
            guard gelf_getshdr(next, &header) != nil else { continue }
            let (end, overflow) = header.sh_offset.addingReportingOverflow(header.sh_size)
            guard header.sh_type == UInt32(SHT_PROGBITS),
                header.sh_flags & UInt64(SHF_COMPRESSED) == 0, !overflow, end <= UInt64(mappedSize),
                let name = elf_strptr(elf, shstrndx, Int(header.sh_name))
            else { continue }
            let range = (UnsafeRawPointer(base) + Int(header.sh_offset), Int(header.sh_size))
            // The data libdw reads must be these file bytes: a compressed section it inflated keeps
            // its file offset but its size and flags are the inflated ones (libelf updates them).
            guard strcmp(name, ".debug_info") == 0 || strcmp(name, ".debug_line") == 0,
                let data = elf_getdata(next, nil), UnsafeRawPointer(data.pointee.d_buf) == range.0
            else { continue }
            if strcmp(name, ".debug_info") == 0 { foundInfo = range } else if strcmp(name, ".debug_line") == 0 { foundLine = range }
        }
        info = foundInfo
        line = foundLine
    }

    deinit { flush() }

    func release(unitAt offset: UInt64, end: UInt64, lines stmtList: UInt64?) {
        guard let info else { return }
        var infoRange: (start: Int, end: Int)? = nil, lineRange: (start: Int, end: Int)? = nil
        if offset < end, end <= UInt64(info.size) { infoRange = (Int(offset), Int(end)) }
        // The line program's length is its first field (32-bit, or 0xffffffff then 64-bit).
        // DW_AT_stmt_list comes from the file: compared without adding to it (no overflow).
        if let line, let stmtList, line.size >= 12, stmtList <= UInt64(line.size - 12) {
            let start = line.file + Int(stmtList)
            var length = UInt64(start.loadUnaligned(as: UInt32.self)), header: UInt64 = 4
            if length == 0xffff_ffff { length = start.loadUnaligned(fromByteOffset: 4, as: UInt64.self); header = 12 }
            let (total, overflow) = length.addingReportingOverflow(header)
            if !overflow, total <= UInt64(line.size) - stmtList { lineRange = (Int(stmtList), Int(stmtList + total)) }
        }
        // A unit not adjacent to the pending ones (in either section) releases those first.
        if let p = pendingInfo, let r = infoRange, p.end != r.start { flush() }
        if let p = pendingLine, let r = lineRange, p.end != r.start { flush() }
        if let r = infoRange { pendingInfo = (pendingInfo?.start ?? r.start, r.end) }
        if let r = lineRange { pendingLine = (pendingLine?.start ?? r.start, r.end) }
        pendingUnits += 1
        if pendingUnits >= UnitPageReleaser.unitsPerRelease { flush() }
    }

    /// Drops the pages of .debug_info between the two section offsets (whole pages inside them).
    func releaseInfo(from start: UInt64, to end: UInt64) {
        guard let info else { return }
        let end = min(end, UInt64(info.size))  // a corrupt unit length may point past the section
        guard start < end else { return }
        release(info.file + Int(start), Int(end - start))
    }

    func flush() {
        if let info, let p = pendingInfo { release(info.file + p.start, p.end - p.start) }
        if let line, let p = pendingLine { release(line.file + p.start, p.end - p.start) }
        pendingInfo = nil; pendingLine = nil; pendingUnits = 0
    }

    /// Whole pages inside [p, p + count) only: the pages at either end may hold a neighbour's bytes.
    private func release(_ p: UnsafeRawPointer, _ count: Int) {
        let first = (UInt(bitPattern: p) + UInt(page - 1)) & ~UInt(page - 1)
        let last = (UInt(bitPattern: p) + UInt(count)) & ~UInt(page - 1)
        guard last > first else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: first), Int(last - first), MADV_DONTNEED)
    }
}

/// The row columns of one unit before they are appended to the index (`appendLines`), reused
/// from unit to unit. A class so that the builder, a struct that is copied, frees them once.
final class ScratchColumns {
    private(set) var addresses = UnsafeMutableBufferPointer<UInt64>(start: nil, count: 0)
    private(set) var files = UnsafeMutableBufferPointer<UInt32>(start: nil, count: 0)
    private(set) var lines = UnsafeMutableBufferPointer<UInt32>(start: nil, count: 0)
    private(set) var columns = UnsafeMutableBufferPointer<UInt32>(start: nil, count: 0)
    var capacity: Int { addresses.count }

    func grow(to n: Int) {
        free()
        addresses = .allocate(capacity: n)
        files = .allocate(capacity: n)
        lines = .allocate(capacity: n)
        columns = .allocate(capacity: n)
    }

    private func free() {
        addresses.deallocate(); files.deallocate(); lines.deallocate(); columns.deallocate()
    }

    deinit { free() }
}
