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
    private var handles: [String: ELFHandle] = [:]
    private var infos: [String: ELFInfo] = [:]

    /// The open handle of `path`, opened on first use.
    func handle(_ path: String) throws(ELFError) -> ELFHandle {
        if let h = handles[path] { return h }
        let h = try ELFHandle(path: path)
        handles[path] = h
        return h
    }

    /// `path`'s identity and contents, read once.
    func info(_ path: String) throws(ELFError) -> ELFInfo {
        if let i = infos[path] { return i }
        let i = try handle(path).info()
        infos[path] = i
        return i
    }
}
