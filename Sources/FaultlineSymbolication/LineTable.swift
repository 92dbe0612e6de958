// Our own reader of a plain unit's .debug_line program, giving exactly the rows and file names
// libdw 0.188 gives (dwarf_getsrclines + dwarf_filesrc), without libdw's costs.
//
// Why: on the Python library libdw's line decoding was ~15-20% of a full index build — a malloc'd
// list node per row, a qsort of pointers to them (glibc's msort copies), then a copy into its own
// array, and dwarf_getsrcfiles decodes the whole program too (elfutils < 0.191). Here rows go
// straight into one reused array and are sorted only when a unit's sequences are out of order.
//
// Exactness is the contract: the index must not change. Everything this reader does mirrors
// libdw 0.188's read_srclines (libdw/dwarf_getsrclines.c): a unit's rows sorted by address, an
// end-of-sequence row before a row starting at the same address, program order otherwise; the
// last row then marked end-of-sequence; file 0 of DWARF < 5 is "???" and DWARF 5's is its first
// entry; a relative name is joined to its directory unless it is absolute (DWARF < 5: directory 0
// is DW_AT_comp_dir, none without one). Wherever libdw would fail, truncate a value into a bit
// field, or do something we do not model (DW_LNE_define_file, max_ops_per_inst > 1, strx forms,
// big-endian files), `read` returns nil and the caller asks libdw for that unit: the fallback is
// always libdw itself, so a unit is never answered worse than before.
import CDw
#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of .debug_line and of the string sections its DWARF 5 headers point into, as libdw
/// sees them: after `dwarf_begin_elf`, which decompresses SHF_COMPRESSED and `.zdebug_*` sections
/// in place in the Elf, so `elf_getdata` returns the inflated bytes.
struct LineSections: @unchecked Sendable {
    let line: UnsafeRawBufferPointer
    let lineStr: UnsafeRawBufferPointer?
    let str: UnsafeRawBufferPointer?

    init(line: UnsafeRawBufferPointer, lineStr: UnsafeRawBufferPointer? = nil, str: UnsafeRawBufferPointer? = nil) {
        self.line = line
        self.lineStr = lineStr
        self.str = str
    }

    /// Nil when .debug_line is missing, still compressed, or the file is not little-endian.
    /// Call only after a `dwarf_begin_elf` on `elf` (see above; libelf then only reads its caches,
    /// so both threads of a parallel build may call this).
    init?(_ elf: OpaquePointer) {
        guard let ident = elf_getident(elf, nil), ident[Int(EI_DATA)] == UInt8(ELFDATA2LSB) else { return nil }
        var shstrndx = 0
        guard elf_getshdrstrndx(elf, &shstrndx) == 0 else { return nil }
        var found: [UnsafeRawBufferPointer?] = [nil, nil, nil]
        var seen = [false, false, false]
        let names = ["debug_line", "debug_line_str", "debug_str"]
        var scn: OpaquePointer? = nil
        while let next = elf_nextscn(elf, scn) {
            scn = next
            var header = GElf_Shdr()
            guard gelf_getshdr(next, &header) != nil, let cName = elf_strptr(elf, shstrndx, Int(header.sh_name)) else { continue }
            let name = String(cString: cName)
            // libdw's names: `.debug_x`, or `.zdebug_x` (GNU compression); the first section wins.
            let bare = name.hasPrefix(".zdebug_") ? String(name.dropFirst(2)) : name.hasPrefix(".debug_") ? String(name.dropFirst(1)) : ""
            guard let k = names.firstIndex(of: bare), !seen[k] else { continue }
            guard header.sh_type != UInt32(SHT_NOBITS) else { continue }  // libdw skips these too
            seen[k] = true
            guard header.sh_flags & UInt64(SHF_COMPRESSED) == 0, let data = elf_getdata(next, nil),
                let buf = data.pointee.d_buf, data.pointee.d_size > 0
            else { continue }
            let bytes = UnsafeRawBufferPointer(start: buf, count: data.pointee.d_size)
            // A `.zdebug_` section libelf has not inflated still starts with its "ZLIB" header.
            if name.hasPrefix(".zdebug_"), bytes.count >= 4, bytes.loadUnaligned(as: UInt32.self) == 0x4249_4c5a { continue }
            found[k] = bytes
        }
        guard let line = found[0] else { return nil }
        self.line = line
        lineStr = found[1]
        str = found[2]
    }
}

/// One row as libdw keeps it (the fields readLines uses), plus its place in program order.
struct LineRow {
    var address: UInt64
    var file: UInt32
    var line: Int32
    var column: UInt16
    var isEnd: Bool
    var order: UInt32
}

/// A unit's decoded header tables: what dwarf_getsrcdirs and dwarf_filesrc give.
struct LineFileTable {
    /// Directory strings; DWARF < 5 entry 0 is DW_AT_comp_dir (nil without one).
    var directories: [UnsafeRawBufferPointer?] = []
    /// Per file: its directory index, or -1 when the name is used as is (absolute, or file 0 of DWARF < 5).
    var fileDirectory: [Int] = []
    /// Nil: libdw's placeholder file 0 before DWARF 5, named "???".
    var fileName: [UnsafeRawBufferPointer?] = []

    var count: Int { fileName.count }
}

/// Bounds-checked little-endian reads over [p, end); every read fails (nil) instead of running over.
struct ByteCursor {
    var p: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>

    var remaining: Int { end - p }

    @inline(__always) mutating func u8() -> UInt8? {
        guard p < end else { return nil }
        defer { p += 1 }
        return p.pointee
    }

    @inline(__always) mutating func fixed(_ size: Int) -> UInt64? {
        guard size <= 8, remaining >= size else { return nil }
        var v: UInt64 = 0
        for i in 0..<size { v |= UInt64(p[i]) << (8 * UInt64(i)) }
        p += size
        return v
    }

    /// At most 10 bytes, and no bits beyond 64 (libdw would give UINT64_MAX or drop them).
    @inline(__always) mutating func uleb() -> UInt64? {
        guard p < end else { return nil }
        let first = p.pointee
        p += 1
        if first < 0x80 { return UInt64(first) }
        var value = UInt64(first & 0x7f)
        var shift: UInt64 = 7
        while p < end {
            let b = p.pointee
            p += 1
            let bits = UInt64(b & 0x7f)
            if shift == 63 { guard bits <= 1 else { return nil } }
            value |= bits << shift
            if b < 0x80 { return value }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    @inline(__always) mutating func sleb() -> Int64? {
        var value: Int64 = 0
        var shift: Int64 = 0
        while p < end {
            let b = p.pointee
            p += 1
            value |= Int64(b & 0x7f) << shift
            shift += 7
            if b < 0x80 {
                if shift < 64 && b & 0x40 != 0 { value |= -1 << shift }
                return value
            }
            if shift >= 63 { return nil }  // values this wide are not line advances libdw keeps
        }
        return nil
    }

    /// A NUL-terminated string starting here (without the NUL), and the cursor after it.
    mutating func cString() -> UnsafeRawBufferPointer? {
        guard let nul = memchr(p, 0, remaining) else { return nil }
        let n = UnsafeRawPointer(nul) - UnsafeRawPointer(p)
        defer { p += n + 1 }
        return UnsafeRawBufferPointer(start: p, count: n)
    }
}

enum LineTableReader {
    /// Rows per unit beyond which we leave the unit to libdw (row order is kept in 32 bits).
    static let maxRows = Int(Int32.max)

    /// Decodes the line program at `offset` of .debug_line into `rows` (replaced), sorted as libdw
    /// sorts them, and returns its file table; nil when libdw must read this unit instead.
    /// - Parameter compDir: the unit's DW_AT_comp_dir as libdw reads it (directory 0 before DWARF 5).
    /// - Parameter addressSize: the unit header's address size.
    static func read(
        _ sections: LineSections, offset: UInt64, addressSize: Int, compDir: UnsafePointer<CChar>?,
        rows: inout [LineRow]
    ) -> LineFileTable? {
        rows.removeAll(keepingCapacity: true)
        guard addressSize == 4 || addressSize == 8, let base = sections.line.baseAddress,
            offset < UInt64(sections.line.count)
        else { return nil }
        let sectionStart = base.assumingMemoryBound(to: UInt8.self)
        var c = ByteCursor(p: sectionStart + Int(offset), end: sectionStart + sections.line.count)
        guard let header = readHeader(&c, addressSize: addressSize) else { return nil }
        var hc = ByteCursor(p: c.p, end: header.programStart)
        guard let files = readFileTable(&hc, header: header, sections: sections, compDir: compDir) else { return nil }
        var program = ByteCursor(p: header.programStart, end: header.unitEnd)
        // Every row is emitted by an opcode byte, so the program's length bounds the row count.
        // Reserving that bound only reserves address space (malloc maps a large block; pages
        // never written cost nothing) and spares the doubling's copies, each into a fresh
        // mapping whose pages fault in again: on one large unit that was most of the decoding.
        let bound = min(header.unitEnd - header.programStart + 1, 1 << 22)  // a huge program grows as before
        if rows.capacity < bound { rows.reserveCapacity(bound) }
        guard runProgram(&program, header: header, addressSize: addressSize, rows: &rows) else {
            rows.removeAll(keepingCapacity: true)
            return nil
        }
        sortAsLibdw(&rows)
        if !rows.isEmpty { rows[rows.count - 1].isEnd = true }  // libdw marks the highest row so
        return files
    }

    struct Header {
        var version: Int
        var offsetSize: Int
        var minimumInstructionLength: UInt64
        var defaultIsStmt: UInt8
        var lineBase: Int64
        var lineRange: UInt64
        var opcodeBase: Int
        var standardOpcodeLengths: UnsafePointer<UInt8>  // index 1..<opcodeBase
        var programStart: UnsafePointer<UInt8>
        var unitEnd: UnsafePointer<UInt8>
    }

    private static func readHeader(_ c: inout ByteCursor, addressSize: Int) -> Header? {
        guard var length = c.fixed(4) else { return nil }
        var offsetSize = 4
        if length == 0xffff_ffff {
            guard let l = c.fixed(8) else { return nil }
            length = l
            offsetSize = 8
        } else if length >= 0xffff_fff0 {
            return nil  // reserved values
        }
        guard length <= UInt64(c.remaining) else { return nil }
        let unitEnd = c.p + Int(length)
        c = ByteCursor(p: c.p, end: unitEnd)
        guard let version = c.fixed(2), (2...5).contains(version) else { return nil }
        if version >= 5 {
            guard let a = c.u8(), let s = c.u8(), Int(a) == addressSize, s == 0 else { return nil }
        }
        guard let headerLength = c.fixed(offsetSize), headerLength <= UInt64(c.remaining) else { return nil }
        let programStart = c.p + Int(headerLength)
        c = ByteCursor(p: c.p, end: programStart)
        guard let minInst = c.u8() else { return nil }
        if version >= 4 {
            // VLIW op_index arithmetic is not modelled: libdw reads such a unit.
            guard let maxOps = c.u8(), maxOps == 1 else { return nil }
        }
        guard let isStmt = c.u8(), let lineBase = c.u8(), let lineRange = c.u8(), let opcodeBase = c.u8() else { return nil }
        // Below 10 the standard opcodes libdw checks (up to DW_LNS_set_isa's neighbours) would read
        // past the length table; no producer emits that.
        guard opcodeBase >= 10, c.remaining >= Int(opcodeBase) - 1 else { return nil }
        let lengths = c.p - 1
        c.p += Int(opcodeBase) - 1
        return Header(
            version: Int(version), offsetSize: offsetSize, minimumInstructionLength: UInt64(minInst),
            defaultIsStmt: isStmt, lineBase: Int64(Int8(bitPattern: lineBase)), lineRange: UInt64(lineRange),
            opcodeBase: Int(opcodeBase), standardOpcodeLengths: lengths, programStart: programStart, unitEnd: unitEnd)
    }

    // MARK: Directory and file tables

    private static func readFileTable(
        _ c: inout ByteCursor, header: Header, sections: LineSections,
        compDir: UnsafePointer<CChar>?
    ) -> LineFileTable? {
        var t = LineFileTable()
        // File 0: libdw's placeholder before DWARF 5; DWARF 5 replaces it with its first entry.
        t.fileName.append(nil)
        t.fileDirectory.append(-1)
        if header.version < 5 {
            t.directories.append(compDir.map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) })
            while true {
                guard c.remaining > 0 else { return nil }
                if c.p.pointee == 0 { c.p += 1; break }
                guard let d = c.cString(), t.directories.count < 1 << 20 else { return nil }
                t.directories.append(d)
            }
            guard c.remaining > 0 else { return nil }
            while true {
                guard c.remaining > 0 else { return nil }
                if c.p.pointee == 0 { c.p += 1; break }
                guard let name = c.cString(), let dir = c.uleb(), c.uleb() != nil, c.uleb() != nil,
                    dir < UInt64(t.directories.count), t.fileName.count < 1 << 20
                else { return nil }
                t.fileName.append(name)
                t.fileDirectory.append(name.first == UInt8(ascii: "/") ? -1 : Int(dir))
            }
        } else {
            guard let dirFormat = entryFormat(&c), let dirCount = c.uleb() else { return nil }
            guard
                dirFormat.isEmpty
                    ? dirCount == 0
                    : (dirFormat.contains { $0.content == DW_LNCT_path }
                        && dirCount <= UInt64(c.remaining / dirFormat.count))
            else { return nil }
            for _ in 0..<dirCount {
                guard let e = entry(&c, dirFormat, header: header, sections: sections), let path = e.path else { return nil }
                t.directories.append(path)
            }
            guard let fileFormat = entryFormat(&c), let fileCount = c.uleb() else { return nil }
            if fileFormat.isEmpty {
                guard fileCount == 0 else { return nil }
            } else {
                guard fileFormat.contains(where: { $0.content == DW_LNCT_path }),
                    fileFormat.contains(where: { $0.content == DW_LNCT_directory_index }),
                    fileCount <= UInt64(c.remaining / fileFormat.count)
                else { return nil }
            }
            for n in 0..<fileCount {
                guard let e = entry(&c, fileFormat, header: header, sections: sections), let name = e.path,
                    let dir = e.directory, dir < UInt64(t.directories.count)
                else { return nil }
                let d = name.first == UInt8(ascii: "/") ? -1 : Int(dir)
                if n == 0 { t.fileName[0] = name; t.fileDirectory[0] = d } else { t.fileName.append(name); t.fileDirectory.append(d) }
            }
        }
        // libdw requires the tables to end exactly where the program starts.
        guard c.remaining == 0 else { return nil }
        return t
    }

    private struct EntryField { var content: Int; var form: Int }

    private static func entryFormat(_ c: inout ByteCursor) -> [EntryField]? {
        guard let n = c.u8() else { return nil }
        var out: [EntryField] = []
        for _ in 0..<n {
            guard let content = c.uleb(), let form = c.uleb(), content <= 0xffff, form <= 0xffff else { return nil }
            out.append(EntryField(content: Int(content), form: Int(form)))
        }
        return out
    }

    /// One directory or file entry: its path string and directory index; other fields skipped by size.
    private static func entry(
        _ c: inout ByteCursor, _ format: [EntryField], header: Header,
        sections: LineSections
    ) -> (path: UnsafeRawBufferPointer?, directory: UInt64?)? {
        var path: UnsafeRawBufferPointer? = nil
        var directory: UInt64? = nil
        for f in format {
            if f.content == DW_LNCT_path {
                switch f.form {
                case DW_FORM_string: guard let s = c.cString() else { return nil }; path = s
                case DW_FORM_line_strp, DW_FORM_strp:
                    guard let off = c.fixed(header.offsetSize),
                        let s = string(in: f.form == DW_FORM_line_strp ? sections.lineStr : sections.str, at: off)
                    else { return nil }
                    path = s
                default: return nil  // strx needs the unit's string offsets; strp_sup a supplementary file
                }
            } else if f.content == DW_LNCT_directory_index {
                switch f.form {
                case DW_FORM_data1: directory = c.fixed(1)
                case DW_FORM_data2: directory = c.fixed(2)
                case DW_FORM_data4: directory = c.fixed(4)
                case DW_FORM_data8: directory = c.fixed(8)
                case DW_FORM_udata: directory = c.uleb()
                default: return nil
                }
                guard directory != nil else { return nil }
            } else {
                guard skip(&c, form: f.form, offsetSize: header.offsetSize) else { return nil }
            }
        }
        return (path, directory)
    }

    /// Skips a value of a form libdw accepts in line table entry formats; false for any other form.
    private static func skip(_ c: inout ByteCursor, form: Int, offsetSize: Int) -> Bool {
        var size: UInt64
        switch form {
        case DW_FORM_data1, DW_FORM_strx1: size = 1
        case DW_FORM_data2, DW_FORM_strx2: size = 2
        case DW_FORM_strx3: size = 3
        case DW_FORM_data4, DW_FORM_strx4: size = 4
        case DW_FORM_data8: size = 8
        case DW_FORM_data16: size = 16
        case DW_FORM_strp, DW_FORM_line_strp, DW_FORM_sec_offset: size = UInt64(offsetSize)
        case DW_FORM_udata, DW_FORM_strx: return c.uleb() != nil
        case DW_FORM_sdata: return c.sleb() != nil
        case DW_FORM_string: return c.cString() != nil
        case DW_FORM_block: guard let n = c.uleb() else { return false }; size = n
        case DW_FORM_block1: guard let n = c.fixed(1) else { return false }; size = n
        case DW_FORM_block2: guard let n = c.fixed(2) else { return false }; size = n
        case DW_FORM_block4: guard let n = c.fixed(4) else { return false }; size = n
        default: return false
        }
        guard size <= UInt64(c.remaining) else { return false }
        c.p += Int(size)
        return true
    }

    /// A NUL-terminated string at `offset` of a string section.
    private static func string(in section: UnsafeRawBufferPointer?, at offset: UInt64) -> UnsafeRawBufferPointer? {
        guard let section, let base = section.baseAddress, offset < UInt64(section.count) else { return nil }
        let start = base + Int(offset)
        guard let nul = memchr(start, 0, section.count - Int(offset)) else { return nil }
        return UnsafeRawBufferPointer(start: start, count: UnsafeRawPointer(nul) - start)
    }

    // MARK: The line program

    /// Runs the state machine as libdw's read_srclines does; false where libdw would fail or where
    /// it would store a value we do not reproduce (see the file comment).
    private static func runProgram(_ c: inout ByteCursor, header h: Header, addressSize: Int, rows: inout [LineRow]) -> Bool {
        var address: UInt64 = 0
        var file: UInt64 = 1
        var line: Int64 = 1
        var column: UInt64 = 0
        var isStmt = h.defaultIsStmt
        var isa: UInt64 = 0
        var discriminator: UInt64 = 0
        let lengths = h.standardOpcodeLengths
        let minInst = h.minimumInstructionLength
        let opcodeBase = h.opcodeBase

        // libdw's Dwarf_Line keeps line in an int, column in 16 bits, is_stmt in 1 bit, isa in 8 and
        // the discriminator in 24 (0.188 rejects the table, later versions truncate): a row whose
        // registers do not fit goes to libdw. The file number is an unsigned int there as here.
        @inline(__always) func emit(_ isEnd: Bool) -> Bool {
            guard line >= Int64(Int32.min), line <= Int64(Int32.max), column <= 0xffff, isStmt <= 1, isa <= 0xff,
                discriminator < 1 << 24, rows.count < maxRows
            else { return false }
            rows.append(
                LineRow(
                    address: address, file: UInt32(truncatingIfNeeded: file), line: Int32(line),
                    column: UInt16(column), isEnd: isEnd, order: UInt32(rows.count)))
            return true
        }
        // libdw computes `minimum_instr_len * advance` in unsigned int.
        @inline(__always) func advance(_ operationAdvance: UInt64) -> Bool {
            let (product, overflow) = minInst.multipliedReportingOverflow(by: operationAdvance)
            guard !overflow, product <= UInt64(UInt32.max) else { return false }
            address &+= product
            return true
        }

        // Each special opcode's line delta (low 32 bits) and address advance (high 32), computed once
        // per unit: two divisions per row were the reader's largest cost. The advance is at most
        // 255 * 255, so libdw's unsigned int arithmetic cannot overflow here.
        let special = UnsafeMutablePointer<UInt64>.allocate(capacity: 256)
        defer { special.deallocate() }
        if h.lineRange != 0 {
            for opcode in opcodeBase..<256 {
                let adjusted = UInt64(opcode - opcodeBase)
                let delta = Int32(h.lineBase + Int64(adjusted % h.lineRange))
                special[opcode] = (minInst * (adjusted / h.lineRange)) << 32 | UInt64(UInt32(bitPattern: delta))
            }
        }

        while c.p < c.end {
            let opcode = Int(c.p.pointee)
            c.p += 1
            if opcode >= opcodeBase {
                guard h.lineRange != 0 else { return false }
                let entry = special[opcode]
                line += Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: entry)))
                address &+= entry >> 32
                guard emit(false) else { return false }
                discriminator = 0
            } else if opcode == 0 {
                // libdw reads the extended opcode's length as one byte, not a ULEB128: longer ones
                // (never emitted) go to libdw.
                guard c.remaining >= 2 else { return false }
                let length = Int(c.p.pointee)
                c.p += 1
                guard length > 0, length < 0x80, c.remaining >= length else { return false }
                let sub = Int(c.p.pointee)
                c.p += 1
                let operandEnd = c.p + (length - 1)
                switch sub {
                case DW_LNE_end_sequence:
                    guard length == 1, emit(true) else { return false }
                    address = 0; file = 1; line = 1; column = 0; isStmt = h.defaultIsStmt; isa = 0; discriminator = 0
                case DW_LNE_set_address:
                    guard length == 1 + addressSize, let a = c.fixed(addressSize) else { return false }
                    address = a
                case DW_LNE_set_discriminator:
                    // libdw checks the length of *standard* opcode 4 here (a quirk it has had for years).
                    guard lengths[sub] == 1, let d = c.uleb(), d <= UInt64(UInt32.max), c.p == operandEnd else { return false }
                    discriminator = d
                case DW_LNE_define_file:
                    return false  // adds files after the header: left to libdw
                default:
                    c.p = operandEnd  // unknown (vendor) opcodes are skipped by their length
                }
            } else if opcode <= DW_LNS_set_isa {
                switch opcode {
                case DW_LNS_copy:
                    guard lengths[opcode] == 0, emit(false) else { return false }
                    discriminator = 0
                case DW_LNS_advance_pc:
                    guard lengths[opcode] == 1, let v = c.uleb(), v <= UInt64(UInt32.max), advance(v) else { return false }
                case DW_LNS_advance_line:
                    guard lengths[opcode] == 1, let v = c.sleb(), v >= Int64(Int32.min), v <= Int64(Int32.max) else { return false }
                    line += v  // |line| stays far below Int64's range: one Int32 per byte of program
                case DW_LNS_set_file:
                    guard lengths[opcode] == 1, let v = c.uleb(), v <= UInt64(UInt32.max) else { return false }
                    file = v
                case DW_LNS_set_column:
                    guard lengths[opcode] == 1, let v = c.uleb(), v <= UInt64(UInt32.max) else { return false }
                    column = v
                case DW_LNS_negate_stmt:
                    guard lengths[opcode] == 0 else { return false }
                    isStmt = 1 &- isStmt
                case DW_LNS_set_basic_block, DW_LNS_set_prologue_end, DW_LNS_set_epilogue_begin:
                    guard lengths[opcode] == 0 else { return false }
                case DW_LNS_const_add_pc:
                    guard lengths[opcode] == 0, h.lineRange != 0, advance(UInt64(255 - opcodeBase) / h.lineRange) else { return false }
                case DW_LNS_fixed_advance_pc:
                    guard lengths[opcode] == 1, let v = c.fixed(2) else { return false }
                    address &+= v
                case DW_LNS_set_isa:
                    guard lengths[opcode] == 1, let v = c.uleb(), v <= UInt64(UInt32.max) else { return false }
                    isa = v
                default:
                    return false
                }
            } else {
                // A standard opcode newer than we know: skip its ULEB128 operands.
                for _ in 0..<Int(lengths[opcode]) { guard c.uleb() != nil else { return false } }
            }
        }
        return true
    }

    /// libdw's order: by address, an end-of-sequence row first among equal addresses, program order
    /// otherwise (its qsort compares the program position last, so it is stable). Most units are
    /// already in that order (one sequence, or sequences in address order): checked first.
    static func sortAsLibdw(_ rows: inout [LineRow]) {
        guard rows.count > 1 else { return }
        var sorted = true
        rows.withUnsafeBufferPointer { r in
            for i in 1..<r.count where !precedes(r[i - 1], r[i]) { sorted = false; break }
        }
        if !sorted { rows.sort(by: precedes) }
    }

    @inline(__always) static func precedes(_ a: LineRow, _ b: LineRow) -> Bool {
        if a.address != b.address { return a.address < b.address }
        if a.isEnd != b.isEnd { return a.isEnd }
        return a.order < b.order
    }
}
