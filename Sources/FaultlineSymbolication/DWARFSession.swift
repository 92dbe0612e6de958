// Every libdw session over a file starts here. libdw (elfutils 0.188) reads the strings of
// .debug_str and .debug_line_str with strlen from where an offset points, so a string section
// whose last byte is not NUL — a damaged or hostile upload — lets it read past the section's
// buffer (found by `tools/fuzz elf`: dwarf_getsrclines over a mutated .debug_line_str). Such a
// file gets no session: it is used for its ELF symbols only, as a file without DWARF is.
import CDw
#if canImport(Glibc)
    import Glibc
#endif

enum DWARFSession {
    /// `dwarf_begin_elf(elf, DWARF_C_READ)`, or nil when libdw cannot read the file or its string
    /// sections are not terminated.
    static func begin(_ elf: OpaquePointer) -> OpaquePointer? {
        guard let dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nil) else { return nil }
        guard stringSectionsAreTerminated(elf) else {
            dwarf_end(dwarf)
            return nil
        }
        return dwarf
    }

    /// `dwarf_begin(fd, DWARF_C_READ)` under the same rule.
    static func begin(fd: Int32) -> OpaquePointer? {
        guard let dwarf = dwarf_begin(fd, DWARF_C_READ) else { return nil }
        guard let elf = dwarf_getelf(dwarf), stringSectionsAreTerminated(elf) else {
            dwarf_end(dwarf)
            return nil
        }
        return dwarf
    }

    /// Whether each DWARF string section ends with a NUL byte (an empty one is fine). Checked after
    /// libdw opened the file, so a compressed section's data is already the inflated bytes.
    private static func stringSectionsAreTerminated(_ elf: OpaquePointer) -> Bool {
        var names = 0
        guard elf_getshdrstrndx(elf, &names) == 0 else { return false }
        var section = elf_nextscn(elf, nil)
        while let s = section {
            defer { section = elf_nextscn(elf, s) }
            var header = GElf_Shdr()
            guard gelf_getshdr(s, &header) != nil, header.sh_type != SHT_NOBITS, let name = elf_strptr(elf, names, Int(header.sh_name)),
                isStringSection(name)
            else { continue }
            guard let data = elf_getdata(s, nil) else { return false }
            let size = data.pointee.d_size
            if size == 0 { continue }
            guard let bytes = data.pointee.d_buf, bytes.load(fromByteOffset: size - 1, as: UInt8.self) == 0 else { return false }
        }
        return true
    }

    /// .debug_str, .debug_line_str and their .dwo forms, compared in place (no String per
    /// section, no hashed set to build on a one-address run).
    private static func isStringSection(_ name: UnsafePointer<CChar>) -> Bool {
        strcmp(name, ".debug_str") == 0 || strcmp(name, ".debug_line_str") == 0 || strcmp(name, ".debug_str.dwo") == 0
            || strcmp(name, ".debug_line_str.dwo") == 0
    }
}
