// The ELF files one module load has open, by path: the object named on the command line is read
// for its build-id, offered to the locator as the module's own candidate, checked again as the
// module file and then indexed. Opening it anew for each step cost a stat, an open, a mapping of
// the whole file, libelf's parse of its headers, and the page faults of reading them again.
#if canImport(Glibc)
    import Glibc
#endif

/// Handles opened during one module load, kept until the load is over. Not thread-safe: one
/// load runs on one thread (under its module slot's lock).
final class OpenELFFiles {
    /// A load opens one to three files: a short list, searched in order.
    private struct Entry {
        let path: String
        let handle: ELFHandle
        var info: ELFInfo?
    }
    private var entries: [Entry] = []

    /// The open handle of `path`, opened on first use.
    func handle(_ path: String) throws(ELFError) -> ELFHandle {
        try entries[index(path)].handle
    }

    /// `path`'s identity and contents, read once.
    func info(_ path: String) throws(ELFError) -> ELFInfo {
        let i = try index(path)
        if let known = entries[i].info { return known }
        let info = try entries[i].handle.info()
        entries[i].info = info
        return info
    }

    private func index(_ path: String) throws(ELFError) -> Int {
        if let i = entries.firstIndex(where: { $0.path == path }) { return i }
        entries.append(Entry(path: path, handle: try ELFHandle(path: path), info: nil))
        return entries.count - 1
    }
}
