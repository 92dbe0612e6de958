// A partial build's own view of the debug file, in which .debug_info starts at the first unit the
// build parses.
//
// Why: libdw finds a unit's handle by reading every unit header before it (`__libdw_findcu` walks
// from the start of .debug_info; no call takes a unit at an offset without that walk). For a unit
// in the middle of a large library that is dozens of headers, each first read faulting in a window
// of the file, and then the madvise calls that drop those pages again to keep peak memory low. In
// this view the unit is the first, so libdw reads no header before it.
//
// How: a second libelf descriptor over the same file (its own mapping; the caller's descriptor,
// which other code may be reading, is not touched), whose .debug_info data (`Elf_Data`, which
// libdw keeps a pointer to and reads through) is moved to start at the unit. libdw then counts
// .debug_info offsets from there: references inside a unit (DW_FORM_ref1…ref_udata) are relative to
// the unit and keep working; a reference by section offset (DW_FORM_ref_addr), to a type unit
// (DW_FORM_ref_sig8) or of a form chosen per DIE (DW_FORM_indirect) would not, so a unit whose
// abbreviations use any of them is refused (`refersOnlyWithinItself`) and the build starts over
// on the caller's descriptor. The other DWARF sections are the file's own.
import CDw
#if canImport(Glibc)
    import Glibc
#endif

final class DebugInfoView {
    /// The view's descriptor (its .debug_info moved), ended with the view.
    let elf: OpaquePointer
    /// The section offset of the view's first byte: a view offset plus `base` is a file's offset.
    let base: UInt64
    /// Drops the pages of the headers libdw reads between two parsed units (offsets of the file's
    /// section, not of the view). Made before the data moved: it finds the section by its data.
    let headerPages: UnitPageReleaser?
    /// .debug_abbrev's bytes in the view's mapping, for `refersOnlyWithinItself`.
    private let abbreviations: UnsafeRawBufferPointer?

    /// Nil when the view cannot be made: .debug_info or .debug_abbrev compressed (libdw inflates
    /// them onto the heap) or missing, or `base` not inside .debug_info.
    init?(_ file: ELFHandle, base: UInt64) {
        guard base > 0, let elf = elf_begin(file.fd, ELF_C_READ_MMAP, nil) else { return nil }
        guard let data = DebugInfoView.plainSection(".debug_info", of: elf), base < UInt64(data.pointee.d_size),
            let start = data.pointee.d_buf, let abbrev = DebugInfoView.plainSection(".debug_abbrev", of: elf)
        else {
            elf_end(elf)
            return nil
        }
        abbreviations = UnsafeRawBufferPointer(start: abbrev.pointee.d_buf, count: abbrev.pointee.d_size)
        headerPages = UnitPageReleaser(elf)
        data.pointee.d_buf = start + Int(base)
        data.pointee.d_size -= Int(base)
        self.elf = elf
        self.base = base
    }

    deinit {
        headerPages?.flush()  // its ranges lie in this mapping
        elf_end(elf)
    }

    /// The section's data when it is stored as is (not compressed, not NOBITS).
    private static func plainSection(_ wanted: String, of elf: OpaquePointer) -> UnsafeMutablePointer<Elf_Data>? {
        var names = 0
        guard elf_getshdrstrndx(elf, &names) == 0 else { return nil }
        var scn: OpaquePointer? = nil
        while let next = elf_nextscn(elf, scn) {
            scn = next
            var header = GElf_Shdr()
            guard gelf_getshdr(next, &header) != nil, let name = elf_strptr(elf, names, Int(header.sh_name)),
                strcmp(name, wanted) == 0
            else { continue }
            guard header.sh_type == UInt32(SHT_PROGBITS), header.sh_flags & UInt64(SHF_COMPRESSED) == 0,
                let data = elf_getdata(next, nil), data.pointee.d_type == ELF_T_BYTE
            else { return nil }
            return data
        }
        return nil
    }

    /// Whether no abbreviation of the table at `offset` in .debug_abbrev uses a form that refers
    /// outside its unit by a .debug_info offset (or to a type unit, or whose form is given per DIE).
    func refersOnlyWithinItself(abbreviationsAt offset: UInt64) -> Bool {
        guard let abbreviations else { return false }
        return DebugInfoView.refersOnlyWithinItself(abbreviations, at: offset)
    }

    /// The same over a .debug_abbrev's bytes, read here bounds-checked: a table libdw might read
    /// differently (a truncated number, a pair with one half zero, which libdw takes as the end of
    /// the entry in one place and not in another) is refused rather than guessed at.
    static func refersOnlyWithinItself(_ abbreviations: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
        guard let start = abbreviations.baseAddress, offset < UInt64(abbreviations.count) else { return false }
        let bytes = start.assumingMemoryBound(to: UInt8.self)
        var reader = ByteCursor(p: bytes + Int(offset), end: bytes + abbreviations.count)
        while true {
            guard let code = reader.uleb() else { return false }
            if code == 0 { return true }  // the table's end
            guard reader.uleb() != nil, reader.u8() != nil else { return false }  // tag, children
            while true {
                // libdw reads both into an unsigned int: the low 32 bits are the form it acts on.
                guard let name = reader.uleb().map({ UInt32(truncatingIfNeeded: $0) }),
                    let form = reader.uleb().map({ UInt32(truncatingIfNeeded: $0) })
                else { return false }
                if name == 0 && form == 0 { break }
                if name == 0 || form == 0 { return false }
                switch form {
                case UInt32(DW_FORM_ref_addr), UInt32(DW_FORM_ref_sig8), UInt32(DW_FORM_indirect): return false
                // Its value, a SLEB128: the same bytes end it (one beyond 64 bits refuses the view).
                case UInt32(DW_FORM_implicit_const): guard reader.uleb() != nil else { return false }
                default: continue
                }
            }
        }
    }
}
