// The lazy path's unit scan without libelf's mapping: unit headers and root DIEs read with pread.
//
// `UnitTable.scan` through libdw reads each unit's header and root DIE through the file's mapping,
// and every first touch maps a 64 KiB window or a whole large folio of the page cache into our
// memory: on a large library most of a one-address run's scan was those page faults and the
// madvise calls that drop those pages again to keep peak memory low. pread copies the few
// bytes a root DIE needs and maps nothing.
//
// It reads what compilers write for a unit's root DIE (DWARF 2–5: low_pc/high_pc, DW_AT_ranges as
// an offset into .debug_ranges or .debug_rnglists with the entries GCC and clang emit there) and
// gives up (nil) on anything else — compressed or big-endian sections, skeleton and split units,
// addrx/rnglistx forms, abstract origins, a malformed byte: the caller then scans with libdw. The
// rules are libdw 0.188's `dwarf_ranges` on a unit DIE (high_pc and low_pc first, else
// DW_AT_ranges from the unit's base address), so the table equals libdw's
// (UnitTableFileScanTests compares the two on every fixture variant and on libpython).
import CDw
#if canImport(Glibc)
    import Glibc
#endif

extension UnitTable {
    /// Scans `file`'s units with pread; nil when the file has anything this reader does not model
    /// (then `scan(_:)` with libdw gives the answer) or no DWARF libdw would read.
    static func scanWithoutMapping(_ file: ELFHandle) -> UnitTable? {
        // The same files libdw refuses (DWARFSession's rule) get no table here either.
        guard let dwarf = DWARFSession.begin(file.elf) else { return nil }
        dwarf_end(dwarf)
        guard file.header.e_ident.5 == UInt8(ELFDATA2LSB) else { return nil }
        var status = stat()
        guard fstat(file.fd, &status) == 0 else { return nil }
        let fileSize = UInt64(max(0, status.st_size))
        var info: PreadSection?, abbrev: PreadSection?, ranges: PreadSection?, rnglists: PreadSection?
        for s in file.sections() {
            if s.name.hasPrefix(".zdebug") { return nil }
            // Abbreviation tables are read front to back, one unit's after another's (and GCC puts
            // a root's abbreviation late in its table): a larger window takes them in a few reads.
            let window = s.name == ".debug_abbrev" ? 64 * 1024 : 4096
            let section = { () -> PreadSection? in
                guard s.header.sh_type != SHT_NOBITS, s.header.sh_flags & UInt64(SHF_COMPRESSED) == 0 else { return nil }
                // The header's offset and size are the file's word: a section must lie inside
                // the file, so that every pread offset below (section start + offset < size) holds.
                let (end, overflow) = s.header.sh_offset.addingReportingOverflow(s.header.sh_size)
                guard !overflow, end <= fileSize else { return nil }
                return PreadSection(fd: file.fd, fileOffset: s.header.sh_offset, size: s.header.sh_size, window: window)
            }
            switch s.name {
            case ".debug_info": guard let x = section() else { return nil }; info = x
            case ".debug_abbrev": guard let x = section() else { return nil }; abbrev = x
            case ".debug_ranges": guard let x = section() else { return nil }; ranges = x
            case ".debug_rnglists": guard let x = section() else { return nil }; rnglists = x
            default: break
            }
        }
        guard let info, let abbrev else { return nil }
        var reader = RootDIEReader(info: info, abbrev: abbrev, ranges: ranges, rnglists: rnglists)
        return try? reader.table()
    }
}

/// A section read with pread through a window (4 KiB for a root DIE, a few hundred bytes to a few
/// kilobytes; larger for the abbreviation tables, read in order).
private final class PreadSection {
    let fd: Int32
    let fileOffset: UInt64
    let size: UInt64
    private let window: UnsafeMutableRawBufferPointer
    /// The window's section offset and byte count. Behind a pointer, not `var`s: a class's stored
    /// vars are checked for exclusive access at run time, a check on every byte read.
    private let place: UnsafeMutablePointer<(start: UInt64, count: UInt64)>

    init(fd: Int32, fileOffset: UInt64, size: UInt64, window bytes: Int) {
        self.fd = fd
        self.fileOffset = fileOffset
        self.size = size
        window = .allocate(byteCount: bytes, alignment: 8)
        place = .allocate(capacity: 1)
        place.initialize(to: (0, 0))
    }

    deinit {
        window.deallocate()
        place.deallocate()
    }

    /// The bytes from `offset` to the window's end, read anew from `offset` when it is outside
    /// the window or `refill` says so.
    func bytes(from offset: UInt64, refill again: Bool) throws(RootDIEReader.Stop) -> UnsafeRawBufferPointer {
        let i = offset &- place.pointee.start
        if again || i >= place.pointee.count { try refill(at: offset) }
        let start = Int(offset - place.pointee.start)
        return UnsafeRawBufferPointer(rebasing: window[start..<Int(place.pointee.count)])
    }

    @inline(__always) func byte(_ offset: UInt64) throws(RootDIEReader.Stop) -> UInt8 {
        let i = offset &- place.pointee.start
        if i < place.pointee.count { return window[Int(i)] }
        try refill(at: offset)
        return window[0]
    }

    private func refill(at offset: UInt64) throws(RootDIEReader.Stop) {
        guard offset < size else { throw .outOfBounds }
        let want = Int(min(UInt64(window.count), size - offset))
        let got = pread(fd, window.baseAddress, want, off_t(fileOffset + offset))
        guard got > 0 else { throw .outOfBounds }
        place.pointee = (offset, UInt64(got))
    }
}

/// Little-endian reads at a cursor in one section.
private struct Cursor {
    let section: PreadSection
    var offset: UInt64

    mutating func u8() throws(RootDIEReader.Stop) -> UInt8 {
        let b = try section.byte(offset)
        offset += 1
        return b
    }

    mutating func fixed(_ n: Int) throws(RootDIEReader.Stop) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<n { v |= UInt64(try u8()) << (8 * UInt64(i)) }
        return v
    }

    mutating func uleb() throws(RootDIEReader.Stop) -> UInt64 {
        var v: UInt64 = 0, shift: UInt64 = 0
        while true {
            let b = try u8()
            if shift < 64 { v |= UInt64(b & 0x7f) << shift }
            shift += 7
            if b & 0x80 == 0 { return v }
            if shift > 70 { throw .malformed }
        }
    }

    mutating func sleb() throws(RootDIEReader.Stop) -> Int64 {
        var v: Int64 = 0, shift: Int64 = 0, b: UInt8 = 0
        repeat {
            b = try u8()
            if shift < 64 { v |= Int64(b & 0x7f) << shift }
            shift += 7
            if shift > 70 { throw .malformed }
        } while b & 0x80 != 0
        if shift < 64 && b & 0x40 != 0 { v |= -1 << shift }
        return v
    }

    mutating func skip(_ n: UInt64) throws(RootDIEReader.Stop) {
        let (end, overflow) = offset.addingReportingOverflow(n)
        guard !overflow, end <= section.size else { throw .outOfBounds }
        offset = end
    }

    mutating func skipString() throws(RootDIEReader.Stop) {
        while try u8() != 0 {}
    }
}

/// Reads every unit header and root DIE of .debug_info into a `UnitTable`.
private struct RootDIEReader {
    /// Why the reader gave up: the caller scans with libdw instead.
    enum Stop: Error { case outOfBounds, malformed, unsupported }

    let info: PreadSection, abbrev: PreadSection, ranges: PreadSection?, rnglists: PreadSection?

    /// One unit's header fields the root DIE's forms depend on.
    struct Unit {
        var version: UInt16 = 0
        var addressSize = 8
        var offsetSize = 4
    }

    /// The root DIE attributes `dwarf_ranges` reads.
    struct Root {
        var lowPC: UInt64?, highPC: UInt64?, highPCIsOffset = false
        var entryPC: UInt64?
        var ranges: UInt64?
    }

    mutating func table() throws(Stop) -> UnitTable {
        var t = UnitTable()
        var rs: [UnitRange] = []
        var offset: UInt64 = 0
        while offset < info.size {
            var c = Cursor(section: info, offset: offset)
            var unit = Unit()
            var length = try c.fixed(4)
            if length == 0xffff_ffff {
                length = try c.fixed(8)
                unit.offsetSize = 8
            } else if length >= 0xffff_fff0 {
                throw .malformed
            }
            let (next, overflow) = c.offset.addingReportingOverflow(length)
            guard !overflow, next <= info.size, length >= 2 else { throw .malformed }
            unit.version = UInt16(try c.fixed(2))
            guard (2...5).contains(unit.version) else { throw .unsupported }
            var unitType = UInt8(DW_UT_compile)
            let abbrevOffset: UInt64
            if unit.version >= 5 {
                unitType = try c.u8()
                unit.addressSize = Int(try c.u8())
                abbrevOffset = try c.fixed(unit.offsetSize)
                switch unitType {
                case UInt8(DW_UT_compile), UInt8(DW_UT_partial): break
                case UInt8(DW_UT_type), UInt8(DW_UT_split_type):  // no code: libdw's scan skips them too
                    offset = next
                    continue
                default: throw .unsupported  // skeleton and split units: libdw decides
                }
            } else {
                abbrevOffset = try c.fixed(unit.offsetSize)
                unit.addressSize = Int(try c.u8())
            }
            guard unit.addressSize == 4 || unit.addressSize == 8 else { throw .unsupported }
            let root = try readRoot(&c, unit, abbrevOffset: abbrevOffset)
            let u = t.offsets.count
            t.offsets.append(offset)
            t.sizes.append(next - offset)
            let own = try unitRanges(root, unit)
            if own.isEmpty { t.unranged.append(u) }
            for (lo, hi) in own { rs.append(UnitRange(low: lo, high: hi, unit: Int32(u))) }
            offset = next
        }
        guard !t.offsets.isEmpty else { throw .unsupported }
        t.finish(rs)
        return t
    }

    /// The root DIE's attributes, read through its abbreviation.
    func readRoot(_ c: inout Cursor, _ unit: Unit, abbrevOffset: UInt64) throws(Stop) -> Root {
        let code = try c.uleb()
        guard code != 0 else { throw .unsupported }
        let (tag, attributes) = try findAbbreviation(code, table: abbrevOffset)
        guard tag == UInt64(DW_TAG_compile_unit) || tag == UInt64(DW_TAG_partial_unit) else { throw .unsupported }
        var a = Cursor(section: abbrev, offset: attributes)
        var root = Root()
        var seen: [UInt64] = []  // a root DIE has a handful of attributes
        seen.reserveCapacity(16)
        while true {
            let name = try a.uleb(), form = try a.uleb()
            let implicit = form == UInt64(DW_FORM_implicit_const) ? try a.sleb() : 0
            if name == 0 && form == 0 { break }
            let value = try readValue(&c, form: form, implicit: implicit, unit)
            // dwarf_attr finds an attribute's first occurrence.
            guard !seen.contains(name) else { continue }
            seen.append(name)
            switch Int(name) {
            case DW_AT_low_pc:
                if case .address(let v) = value { root.lowPC = v } else if case .unsupported = value { throw .unsupported }
            case DW_AT_high_pc:
                switch value {
                case .address(let v): root.highPC = v
                case .constant(let v): root.highPC = v; root.highPCIsOffset = true
                case .unsupported: throw .unsupported
                default: break
                }
            case DW_AT_entry_pc:
                if case .address(let v) = value { root.entryPC = v } else if case .unsupported = value { throw .unsupported }
            case DW_AT_ranges:
                switch value {
                // libdw takes data4/data8 as a section offset before DWARF 4 only.
                case .constant(let v) where unit.version < 4 && (form == UInt64(DW_FORM_data4) || form == UInt64(DW_FORM_data8)): root.ranges = v
                case .sectionOffset(let v): root.ranges = v
                default: throw .unsupported
                }
            case DW_AT_abstract_origin, DW_AT_specification, DW_AT_GNU_dwo_id, DW_AT_GNU_dwo_name, DW_AT_dwo_name:
                throw .unsupported  // libdw would follow or treat the unit as split: let it
            default: break
            }
        }
        return root
    }

    /// The tag and the offset of the attribute list of abbreviation `code` in the table at
    /// `offset` (entries: code, tag, children flag, (attribute, form) pairs ending with (0, 0)).
    /// The entries before it are walked in the window's bytes directly: a unit's own abbreviation
    /// is often one of the last of its table (GCC orders them by use), and this walk was most of
    /// the scan when every byte went through `Cursor`.
    func findAbbreviation(_ code: UInt64, table offset: UInt64) throws(Stop) -> (tag: UInt64, attributes: UInt64) {
        var entry = offset  // the section offset of the entry being read
        var bytes = try abbrev.bytes(from: entry, refill: false)
        var base = entry  // the section offset of bytes[0]
        var fresh = false  // whether `bytes` was read from `base` on
        while true {
            var i = Int(entry - base)
            read: do {
                guard let start = bytes.baseAddress, !bytes.isEmpty else { break read }
                let p = start.assumingMemoryBound(to: UInt8.self), n = bytes.count
                guard let c = Self.uleb(p, n, &i) else { break read }
                guard c != 0 else { throw .malformed }
                guard let tag = Self.uleb(p, n, &i), i < n else { break read }
                i += 1  // the children flag
                if c == code { return (tag, base + UInt64(i)) }
                // The attribute specifications, skipped: only the (0, 0) pair that ends them matters.
                while true {
                    guard let name = Self.uleb(p, n, &i), let form = Self.uleb(p, n, &i) else { break read }
                    // An implicit constant is an SLEB128: the same bytes as a ULEB128 to skip.
                    if form == UInt64(DW_FORM_implicit_const) { guard Self.uleb(p, n, &i) != nil else { break read } }
                    if name == 0 && form == 0 { break }
                }
                entry = base + UInt64(i)
                continue
            }
            // The bytes ended inside this entry: read on from its start, unless they were read
            // from there already (an entry longer than the window) or reached the section's end.
            guard !(fresh && entry == base), base + UInt64(bytes.count) < abbrev.size else { throw .unsupported }
            bytes = try abbrev.bytes(from: entry, refill: true)
            base = entry
            fresh = true
        }
    }

    /// The ULEB128 at `p[i]` (i moves past it), or nil when the `count` bytes end inside it. Most
    /// values in an abbreviation table are one byte: that case is a single compare. Not the line
    /// reader's `ByteCursor.uleb`: that one rejects values wider than 64 bits (libdw's rule for a
    /// value it keeps), where this walk only skips entries, and nil here means "read more bytes".
    @inline(__always) static func uleb(_ p: UnsafePointer<UInt8>, _ count: Int, _ i: inout Int) -> UInt64? {
        guard i < count else { return nil }
        let first = p[i]
        i += 1
        if first < 0x80 { return UInt64(first) }
        var v = UInt64(first & 0x7f), shift: UInt64 = 7
        while i < count {
            let b = p[i]
            i += 1
            if shift < 64 { v |= UInt64(b & 0x7f) << shift }
            shift += 7
            if b & 0x80 == 0 { return v }
        }
        return nil
    }

    enum Value { case address(UInt64), constant(UInt64), sectionOffset(UInt64), other, unsupported }

    /// Reads (or skips) one attribute value.
    func readValue(_ c: inout Cursor, form: UInt64, implicit: Int64, _ unit: Unit) throws(Stop) -> Value {
        switch Int(form) {
        case DW_FORM_addr: return .address(try c.fixed(unit.addressSize))
        case DW_FORM_data1: return .constant(try c.fixed(1))
        case DW_FORM_data2: return .constant(try c.fixed(2))
        case DW_FORM_data4: return .constant(try c.fixed(4))
        case DW_FORM_data8: return .constant(try c.fixed(8))
        case DW_FORM_udata: return .constant(try c.uleb())
        case DW_FORM_sdata: return .constant(UInt64(bitPattern: try c.sleb()))
        case DW_FORM_implicit_const: return .constant(UInt64(bitPattern: implicit))
        case DW_FORM_sec_offset: return .sectionOffset(try c.fixed(unit.offsetSize))
        case DW_FORM_flag_present: return .other
        case DW_FORM_flag, DW_FORM_ref1, DW_FORM_strx1, DW_FORM_addrx1: try c.skip(1)
        case DW_FORM_ref2, DW_FORM_strx2, DW_FORM_addrx2: try c.skip(2)
        case DW_FORM_strx3, DW_FORM_addrx3: try c.skip(3)
        case DW_FORM_ref4, DW_FORM_ref_sup4, DW_FORM_strx4, DW_FORM_addrx4: try c.skip(4)
        case DW_FORM_ref8, DW_FORM_ref_sig8, DW_FORM_ref_sup8: try c.skip(8)
        case DW_FORM_data16: try c.skip(16)
        case DW_FORM_strp, DW_FORM_line_strp, DW_FORM_strp_sup, DW_FORM_GNU_ref_alt, DW_FORM_GNU_strp_alt:
            try c.skip(UInt64(unit.offsetSize))
        case DW_FORM_ref_addr: try c.skip(UInt64(unit.version == 2 ? unit.addressSize : unit.offsetSize))
        case DW_FORM_ref_udata, DW_FORM_strx, DW_FORM_addrx, DW_FORM_loclistx, DW_FORM_rnglistx, DW_FORM_GNU_addr_index, DW_FORM_GNU_str_index:
            _ = try c.uleb()
        case DW_FORM_string: try c.skipString()
        case DW_FORM_block1: try c.skip(try c.fixed(1))
        case DW_FORM_block2: try c.skip(try c.fixed(2))
        case DW_FORM_block4: try c.skip(try c.fixed(4))
        case DW_FORM_block, DW_FORM_exprloc: try c.skip(try c.uleb())
        default: throw .unsupported  // DW_FORM_indirect and forms this reader does not know
        }
        // An address through .debug_addr, a range list through an index: not modelled here.
        switch Int(form) {
        case DW_FORM_addrx, DW_FORM_addrx1, DW_FORM_addrx2, DW_FORM_addrx3, DW_FORM_addrx4, DW_FORM_GNU_addr_index, DW_FORM_rnglistx:
            return .unsupported
        default: return .other
        }
    }

    /// The unit's live ranges, as `DWARFIndexBuilder.unitRanges` gets them from `dwarf_ranges`.
    func unitRanges(_ root: Root, _ unit: Unit) throws(Stop) -> [(UInt64, UInt64)] {
        var out: [(UInt64, UInt64)] = []
        func add(_ lo: UInt64, _ hi: UInt64) { if DWARFIndexBuilder.isLive(lo, hi) { out.append((lo, hi)) } }
        // dwarf_highpc then dwarf_lowpc: one contiguous range.
        if let low = root.lowPC, let high = root.highPC {
            add(low, root.highPCIsOffset ? low &+ high : high)
            return out
        }
        guard let start = root.ranges else { return out }  // no PC attributes: no ranges
        var base = root.lowPC ?? root.entryPC ?? 0  // the unit's base address
        let width = unit.addressSize
        if unit.version < 5 {
            guard let ranges else { throw .unsupported }
            var c = Cursor(section: ranges, offset: start)
            let escape: UInt64 = width == 8 ? .max : 0xffff_ffff
            while true {
                let begin = try c.fixed(width), end = try c.fixed(width)
                if begin == escape {
                    guard end != escape else { throw .malformed }
                    base = end
                    continue
                }
                if begin == 0 && end == 0 { return out }
                add(begin &+ base, end &+ base)
            }
        }
        guard let rnglists else { throw .unsupported }
        var c = Cursor(section: rnglists, offset: start)
        while true {
            switch Int(try c.u8()) {
            case DW_RLE_end_of_list: return out
            case DW_RLE_offset_pair:
                let begin = try c.uleb(), end = try c.uleb()
                add(begin &+ base, end &+ base)
            case DW_RLE_base_address: base = try c.fixed(width)
            case DW_RLE_start_end:
                let begin = try c.fixed(width), end = try c.fixed(width)
                add(begin, end)
            case DW_RLE_start_length:
                let begin = try c.fixed(width), length = try c.uleb()
                add(begin, begin &+ length)
            default: throw .unsupported  // the addrx entries need .debug_addr
            }
        }
    }
}
