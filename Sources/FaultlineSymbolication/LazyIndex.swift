// The lazy cold path: answer the first addresses from the compile units that cover them.
//
// A full index parses every unit (on the Python library ~0.2 s); one crash report needs a few.
// `UnitTable` reads only each unit's header and root DIE (its DW_AT_ranges / low_pc+high_pc), so
// finding the units for a set of addresses costs a few milliseconds; a partial index is then
// built from those units alone with the same builder (same answers for the addresses they cover).
//
// Why a CU-range scan and not `.debug_aranges` (dwarf_getaranges): clang and swiftc emit no
// aranges, GCC's are optional and may be incomplete (units without code are left out, and a
// stale table after `objcopy`/`dwz` is not rebuilt), and the root DIE's ranges are what the
// builder itself uses for the `cu*` tables, so a partial index and a full one agree by
// construction. Reading 146 root DIEs of libpython costs about as much as reading its aranges.
import CDw
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// A root DIE's address range (a struct, not a tuple: a tuple's type metadata is built at run
/// time, and in a binary this size that lookup is a visible part of a one-address run).
struct UnitRange {
    var low: UInt64
    var high: UInt64
    var unit: Int32
}

/// Every code-bearing unit of a debug file with the address ranges its root DIE claims.
struct UnitTable: Sendable, Equatable {
    var offsets: [UInt64] = []  // unit header offsets, in file order
    var sizes: [UInt64] = []  // bytes of .debug_info per unit
    /// Address ranges sorted by low, with the unit (index into `offsets`) of each.
    var low: [UInt64] = [], high: [UInt64] = [], unit: [Int32] = []
    /// Running maximum of `high` (ranges of LTO units may overlap; the search walks back while it can).
    var maxHigh: [UInt64] = []
    /// Units whose root DIE names no address range: only their line table knows; always parsed.
    var unranged: [Int] = []

    var totalBytes: UInt64 { sizes.reduce(0, +) }

    /// Root DIEs read between two releases of the file's pages (see `scan`).
    static let unitsPerRelease = 4

    /// Scans `file`'s units: with pread where the reader models the file (UnitTableFileScan.swift),
    /// else through libdw. Nil when the file has no DWARF libdw can read.
    static func scan(_ file: ELFHandle) -> UnitTable? {
        scanWithoutMapping(file) ?? scan(file.elf)
    }

    /// Scans unit headers and root DIEs through libdw; nil when the file has no DWARF libdw can read.
    static func scan(_ elf: OpaquePointer) -> UnitTable? {
        guard let dwarf = DWARFSession.begin(elf) else { return nil }
        defer { dwarf_end(dwarf) }
        var t = UnitTable()
        var rs: [UnitRange] = []
        var offset: Dwarf_Off = 0
        // Each root DIE read faults in a whole large folio or fault-around window (64 KiB and
        // more) of .debug_info, .debug_abbrev and .debug_rnglists: left mapped, the headers of a
        // large library's units would be megabytes of a one-address run's peak memory. The pages
        // are read-only file pages, so dropping them as the scan goes loses nothing.
        var scannedSinceRelease = 0
        defer { DWARFIndexBuilder.releaseFilePages(elf) }
        while true {
            if scannedSinceRelease == UnitTable.unitsPerRelease { DWARFIndexBuilder.releaseFilePages(elf); scannedSinceRelease = 0 }
            scannedSinceRelease += 1
            var next: Dwarf_Off = 0
            var headerSize = 0
            guard dwarf_next_unit(dwarf, offset, &next, &headerSize, nil, nil, nil, nil, nil, nil) == 0,
                next > offset
            else { break }
            let unitOffset = offset
            offset = next
            var cudie = Dwarf_Die()
            guard dwarf_offdie(dwarf, unitOffset + Dwarf_Off(headerSize), &cudie) != nil else { continue }
            var unitType: UInt8 = 0
            guard dwarf_cu_info(cudie.cu, nil, &unitType, nil, nil, nil, nil, nil) == 0,
                unitType == UInt8(DW_UT_compile) || unitType == UInt8(DW_UT_partial) || unitType == UInt8(DW_UT_skeleton)
            else { continue }
            let own = DWARFIndexBuilder.unitRanges(&cudie)
            // Clang-module references (Swift binaries have dozens) hold no code: never parsed.
            if own.isEmpty && unitType == UInt8(DW_UT_skeleton) && DWARFIndexBuilder.isCodeFreeSkeleton(&cudie) { continue }
            let u = t.offsets.count
            t.offsets.append(unitOffset)
            t.sizes.append(next - unitOffset)
            if own.isEmpty { t.unranged.append(u) }
            for (lo, hi) in own { rs.append(UnitRange(low: lo, high: hi, unit: Int32(u))) }
        }
        guard !t.offsets.isEmpty else { return nil }
        t.finish(rs)
        return t
    }

    /// Fills the range columns from the units' ranges (in unit order).
    mutating func finish(_ ranges: [UnitRange]) {
        var rs = ranges
        rs.sort { $0.low < $1.low }
        var m: UInt64 = 0
        for r in rs { low.append(r.low); high.append(r.high); unit.append(r.unit); m = max(m, r.high); maxHigh.append(m) }
    }

    /// The units whose ranges contain `address` (usually one).
    func units(covering address: UInt64, into out: inout Set<Int>) {
        forEachUnit(covering: address) { out.insert($0) }
    }

    func forEachUnit(covering address: UInt64, _ body: (Int) -> Void) {
        var lo = 0, hi = low.count
        while lo < hi { let mid = (lo + hi) >> 1; if low[mid] <= address { lo = mid + 1 } else { hi = mid } }
        var i = lo - 1
        while i >= 0 && maxHigh[i] > address {
            if address < high[i] { body(Int(unit[i])) }
            i -= 1
        }
    }

    /// Units needed for `addresses`, the unranged ones included. With `stopAbove`, gives up (nil)
    /// as soon as they hold more bytes than that: the caller then builds the full index anyway,
    /// and 100,000 addresses need not all be looked up to know it.
    func units(for addresses: [UInt64], stopAbove limit: UInt64 = .max) -> Set<Int>? {
        var s = Set(unranged)
        var bytes = bytes(of: s)
        for a in addresses {
            var over = false
            forEachUnit(covering: a) { u in
                if s.insert(u).inserted { bytes += sizes[u]; over = over || bytes > limit }
            }
            if over { return nil }
        }
        return s
    }

    func bytes(of units: Set<Int>) -> UInt64 { units.reduce(0) { $0 + sizes[$1] } }

    /// Whether some unit's ranges contain `address` (else only ELF symbols can name it).
    func covers(_ address: UInt64) -> Bool {
        var s = Set<Int>()
        units(covering: address, into: &s)
        return !s.isEmpty
    }

}

/// What a lazily loaded module needs to grow its partial index or build the full one.
final class LazyModuleSource: @unchecked Sendable {
    let units: UnitTable
    let debugPath: String
    let modulePath: String?
    let buildID: BuildID?
    let firstLoadAddress: UInt64
    /// The supplementary file (dwz) the debug file needs, if any.
    var supplementaryPath: String?
    /// Full builds on two threads (`Symbolicator.parallelFullBuild`).
    var parallel = false
    /// `Symbolicator.opensSplitUnits`.
    var opensSplitUnits = true
    /// Units the current partial index was built from.
    var parsed: Set<Int>
    /// Whether the current partial index holds every ELF symbol (else only those that can name
    /// an address inside the parsed units: an address outside every unit needs a rebuild).
    var hasAllSymbols = false

    init(units: UnitTable, debugPath: String, modulePath: String?, buildID: BuildID?, firstLoadAddress: UInt64, parsed: Set<Int>) {
        self.units = units
        self.debugPath = debugPath
        self.modulePath = modulePath
        self.buildID = buildID
        self.firstLoadAddress = firstLoadAddress
        self.parsed = parsed
    }

    /// Above this share of .debug_info a partial index saves too little: build the full one.
    static let fullIndexShare = 0.4

    /// Whether parsing `units` is close enough to parsing everything.
    func wantsFullIndex(_ units: Set<Int>) -> Bool {
        self.units.bytes(of: units) > LazyModuleSource.fullIndexBytes(of: self.units)
    }

    /// Above this many bytes of units, build the full index.
    static func fullIndexBytes(of units: UnitTable) -> UInt64 {
        UInt64(Double(units.totalBytes) * fullIndexShare)
    }

    /// Builds an index from `units` (nil: every unit). Nil when the files cannot be read.
    /// - Parameter allSymbols: keep every ELF symbol, not only those naming addresses in `units`.
    /// - Parameter openFiles: the debug file's handle (then the module's) when the caller has them
    ///   open: a second mapping of the same file would count its pages in our memory twice.
    func build(units selected: Set<Int>?, allSymbols: Bool = false, openFiles: [ELFHandle]? = nil) -> DWARFIndex? {
        var sources: [ELFHandle]
        if let openFiles, !openFiles.isEmpty {
            sources = openFiles
        } else {
            guard let debug = try? ELFHandle(path: debugPath) else { return nil }
            sources = [debug]
            if let m = modulePath, m != debugPath, let h = try? ELFHandle(path: m) { sources.append(h) }
        }
        let debug = sources[0]
        let offsets = selected.map { $0.sorted().map { units.offsets[$0] } }
        var tables = DWARFIndexBuilder.build(
            debugFile: debug, symbolSources: sources, units: offsets, path: parallel ? debugPath : nil,
            supplementary: supplementaryPath, symbolsForUnitsOnly: selected != nil && !allSymbols,
            unitTable: units, opensSplitUnits: opensSplitUnits)
        tables.firstLoadAddress = firstLoadAddress
        tables.hasDWARF = true  // a partial index may hold no unit at all, the file still has DWARF
        if selected != nil { hasAllSymbols = allSymbols }
        return DWARFIndex.inMemory(consume tables, buildID: buildID)
    }
}
