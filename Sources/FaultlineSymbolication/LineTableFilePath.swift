// A line-table file's path as llvm-symbolizer prints it: llvm's rule for joining DW_AT_comp_dir,
// the include directory and the file name (DWARFDebugLine::Prologue::getFileNameByIndex with
// FileLineInfoKind::AbsoluteFilePath), applied to what our reader or libdw decoded.
//
// llvm's rule, for a relative file name in directory entry `d`:
// - DWARF 5 (6.2.4.1): entry 0 *is* the compilation directory, so `d == 0` gives
//   `directory[0]/name` and DW_AT_comp_dir is not joined again;
// - DWARF < 5: entry 0 means "the compilation directory", so `d == 0` gives `comp_dir/name`;
// - any other entry gives `comp_dir/directory[d]/name`, without comp_dir when the entry is absolute.
// An absolute name is printed as it is. Debian builds glibc in a subdirectory with
// `-fdebug-prefix-map=ROOT=.`, so comp_dir and DWARF 5's entry 0 are the relative `./iconv`:
// llvm prints `./iconv/iconv_open.c`, and joining comp_dir again gives `./iconv/./iconv/…`.
enum LineTableFilePath {
    /// The path for file `i` of a table our reader decoded, where each file's directory entry is known.
    /// Its directory 0 is DW_AT_comp_dir before DWARF 5 (as libdw keeps it), so one rule covers both.
    static func path(_ table: LineFileTable, _ i: Int, compDir: String?) -> String {
        // libdw's placeholder file 0 before DWARF 5, named as libdw's units name it (a relative name
        // under no directory); llvm has no such file and prints `??`.
        guard let nameBytes = table.fileName[i] else { return path(libdwJoined: "???", directories: [], compDir: compDir) }
        let name = String(decoding: nameBytes, as: UTF8.self)
        let d = table.fileDirectory[i]
        guard d >= 0, let dirBytes = table.directories[d] else { return collapsingSlashes(name) }
        let directory = String(decoding: dirBytes, as: UTF8.self)
        let base = d == 0 || directory.hasPrefix("/") ? nil : compDir
        return collapsingSlashes(appending([base, directory, name]))
    }

    /// The path for a file libdw named `joined` (dwarf_filesrc: its directory entry, `/`, its name,
    /// or the name alone when absolute) in a table with `directories` (dwarf_getsrcdirs; entry 0 is
    /// DW_AT_comp_dir before DWARF 5). libdw does not say which entry a file is in: the longest entry
    /// that prefixes the path is taken, entry 0 on a tie. That only matters for a relative path, and
    /// only units our reader leaves to libdw (split units, forms it does not model) come here.
    static func path(libdwJoined joined: String, directories: [String], compDir: String?) -> String {
        guard !joined.hasPrefix("/") else { return collapsingSlashes(joined) }
        var entry: Int? = nil
        for (d, directory) in directories.enumerated()
        where !directory.isEmpty && joined.hasPrefix(directory + "/") && directory.utf8.count > (entry.map { directories[$0].utf8.count } ?? -1) {
            entry = d
        }
        // Entry 0 already is the compilation directory; any other relative entry (or a name libdw
        // used alone) is relative to it.
        return collapsingSlashes(entry == 0 ? joined : appending([compDir, joined]))
    }

    /// llvm's sys::path::append: each non-empty component after one `/`.
    static func appending(_ components: [String?]) -> String {
        var out = ""
        for case let c? in components where !c.isEmpty {
            if out.hasSuffix("/") {
                out += c.drop { $0 == "/" }
            } else if out.isEmpty || c.hasPrefix("/") {
                out += c
            } else {
                out += "/" + c
            }
        }
        return out
    }

    /// Doubled slashes collapse, as llvm prints them (libdw turns swiftc's `<compiler-generated>`
    /// into `//<compiler-generated>`).
    static func collapsingSlashes(_ p: String) -> String {
        DWARFIndexBuilder.normalize(p, compDir: nil)
    }
}
