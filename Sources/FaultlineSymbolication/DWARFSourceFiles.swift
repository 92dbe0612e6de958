// The source files a debug file's line tables name — what `faultline upload --include-sources`
// bundles so debuginfod's `/source` endpoint can serve them to gdb.
import FoundationEssentials
import Glibc
import CDw

public enum DWARFSourceFiles {
    /// Absolute paths (relative names joined to the unit's DW_AT_comp_dir, as gdb asks for
    /// them), deduplicated and sorted. Names without a path (`<compiler-generated>`) are left out.
    /// Empty when the file has no DWARF or libdw cannot read it.
    public static func list(path: String) -> [String] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        guard let dwarf = DWARFSession.begin(fd: fd) else { return [] }
        defer { dwarf_end(dwarf) }
        var out = Set<String>()
        var offset: Dwarf_Off = 0
        while true {
            var next: Dwarf_Off = 0
            var headerSize = 0
            guard dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0, next > offset else { break }
            var cudie = Dwarf_Die()
            let unit = offset
            offset = next
            guard dwarf_offdie(dwarf, unit + Dwarf_Off(headerSize), &cudie) != nil else { continue }
            var attr = Dwarf_Attribute()
            let compDir = dwarf_attr(&cudie, UInt32(DW_AT_comp_dir), &attr) != nil ? dwarf_formstring(&attr).map { String(cString: $0) } : nil
            var files: OpaquePointer? = nil
            var count = 0
            guard dwarf_getsrcfiles(&cudie, &files, &count) == 0, let files else { continue }
            for i in 0..<count {
                guard let p = dwarf_filesrc(files, i, nil, nil) else { continue }
                let name = String(cString: p)
                guard !name.isEmpty, !name.contains("<") else { continue }
                let full = DWARFIndexBuilder.normalize(name, compDir: compDir)
                if full.hasPrefix("/") { out.insert(full) }
            }
        }
        return out.sorted()
    }
}
