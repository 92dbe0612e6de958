// Where is the debug file for a module? A chain of sources (one type per strategy) proposes
// candidate files; the locator alone decides whether a candidate is the module's.
import FaultlineProtocol
import FaultlineFiles
#if canImport(Glibc)
    import Glibc
#endif

/// Finds the file holding DWARF for a module by asking its `sources` in order. The standard chain
/// (`init(explicitFiles:debugDirectories:searchModulePath:searchSystem:)`):
/// 1. `ExplicitFileSource` (for example `--debug-file` or `--obj`);
/// 2. `BuildIDDirectorySource`: each debug directory in the `.build-id/xx/rest.debug` layout;
/// 3. `ModulePathSource`: the module's own path;
/// 4. `DebugLinkSource`: the module's `.gnu_debuglink` beside it, in `.debug/`, in each debug
///    directory and under `/usr/lib/debug/<module dir>/` (CRC-32 checked);
/// 5. `SystemDebugSource`: `/usr/lib/debug/.build-id/xx/rest.debug`;
/// 6. `DebuginfodSource` (when a client is given): the servers in `DEBUGINFOD_URLS`, through
///    libdebuginfod and its cache; reached only when every local source came up empty.
/// A file whose build-id differs from the one asked for is never used; it is reported instead.
public struct DebugFileLocator: Sendable {
    public var sources: [any DebugFileSource]

    public init(sources: [any DebugFileSource]) { self.sources = sources }

    /// Whether a supplementary file is also looked for at the path its debug file's DWARF writes
    /// (absolute, or beside it), as gdb and libdw do: what a developer's own files want. Off for
    /// files someone else supplied (the server's uploads), whose DWARF would otherwise choose
    /// which files of this machine are opened: there it is found by its build-id only.
    public var followsSupplementaryPaths = true

    public init(
        explicitFiles: [String] = [], debugDirectories: [String] = [], searchModulePath: Bool = true, searchSystem: Bool = true,
        systemDebugRoot: String = SystemDebugSource.defaultRoot, debuginfod: DebuginfodClient? = nil
    ) {
        var s: [any DebugFileSource] = [ExplicitFileSource(files: explicitFiles), BuildIDDirectorySource(directories: debugDirectories)]
        if searchModulePath {
            s.append(ModulePathSource())
            s.append(DebugLinkSource(directories: debugDirectories, systemDebugRoot: searchSystem ? systemDebugRoot : nil))
        }
        if searchSystem { s.append(SystemDebugSource(root: systemDebugRoot)) }
        if let debuginfod { s.append(DebuginfodSource(client: debuginfod)) }
        sources = s
    }

    /// The outcome of a search.
    public struct Location: Sendable {
        /// A file with DWARF for the module (nil when only symbols were found).
        public var debugFile: String?
        /// The module itself when it was found and matched (source of `.dynsym` and load address).
        public var moduleFile: String?
        /// A matching file with an ELF symbol table but no DWARF (fallback).
        public var symbolsOnlyFile: String?
        /// Files that were found but belong to another build (wrong build-id or debuglink CRC).
        public var mismatched: [String] = []
        /// Which source found `debugFile`.
        public var strategy: String?
        /// The supplementary file `debugFile` needs (dwz: `.gnu_debugaltlink` / `.debug_sup`).
        public var supplementaryFile: String?
        /// A debug file whose supplementary file was not found: its DWARF is not used (names and
        /// inlined frames would be missing or wrong), only its ELF symbols.
        public var missingSupplementary: (debugFile: String, link: SupplementaryLink)?
    }

    public func locate(buildID: BuildID?, modulePath: String?) -> Location {
        locate(buildID: buildID, modulePath: modulePath, opened: OpenELFFiles())
    }

    /// `locate`, reading candidates through `opened` (the caller's handles, shared with it).
    func locate(buildID: BuildID?, modulePath: String?, opened: OpenELFFiles) -> Location {
        var loc = Location()
        var seen = Set<String>()
        let request = DebugFileRequest(buildID: buildID, modulePath: modulePath)

        /// Returns true when the candidate has DWARF and matches (search ends).
        func consider(_ c: DebugFileCandidate) -> Bool {
            guard !seen.contains(c.path), Self.isRegularFile(c.path) else { return false }
            seen.insert(c.path)
            guard let handle = try? opened.handle(c.path), let info = try? opened.info(c.path) else { return false }
            // Identity: the build-id must match; a file without one is only accepted when nothing
            // was asked for, or when the debuglink CRC (checked next) vouches for it.
            if let buildID {
                if let found = info.buildID {
                    guard found == buildID else { loc.mismatched.append(c.path); return false }
                } else if c.crc == nil {
                    loc.mismatched.append(c.path); return false
                }
            }
            if let crc = c.crc, CRC32.ofFile(c.path) != crc { loc.mismatched.append(c.path); return false }
            // DWARF libdw cannot decompress (zstd on 0.188) counts as symbols only; keep looking.
            if info.hasDebugInfo && !info.hasUnreadableDebugInfo {
                // dwz output is usable only with its supplementary file; else keep looking (another
                // copy may be complete) and fall back to its symbols.
                if let link = handle.supplementaryLink {
                    guard let sup = locateSupplementary(link, debugFile: c.path) else {
                        if loc.missingSupplementary == nil { loc.missingSupplementary = (c.path, link) }
                        if info.hasSymbols && loc.symbolsOnlyFile == nil { loc.symbolsOnlyFile = c.path }
                        return false
                    }
                    loc.supplementaryFile = sup
                }
                loc.debugFile = c.path; loc.strategy = c.strategy; return true
            }
            if info.hasSymbols && loc.symbolsOnlyFile == nil { loc.symbolsOnlyFile = c.path }
            return false
        }

        search: for source in sources {
            for c in source.candidates(for: request) where consider(c) { break search }
        }
        if let modulePath, Self.isRegularFile(modulePath), let info = try? opened.info(modulePath),
            buildID == nil || info.buildID == buildID
        {
            loc.moduleFile = modulePath
        }
        return loc
    }

    /// Where the supplementary file named by `link` is, as gdb and libdw look: the path as
    /// written (absolute), else relative to the debug file's directory; then by its build-id
    /// through this locator's sources (debug directories, `/usr/lib/debug/.build-id`, debuginfod —
    /// debuginfod servers index dwz files by build-id like any debug file). A candidate must carry
    /// the link's build-id or `.debug_sup` checksum.
    public func locateSupplementary(_ link: SupplementaryLink, debugFile: String) -> String? {
        var paths: [String] = []
        if !followsSupplementaryPaths || link.name.isEmpty {
            // by build-id only (below)
        } else if link.name.hasPrefix("/") {
            paths.append(link.name)
        } else {
            let dir = debugFile.contains("/") ? String(debugFile[..<debugFile.lastIndex(of: "/")!]) : "."
            paths.append(dir + "/" + link.name)
        }
        func matches(_ path: String) -> Bool {
            guard path != debugFile, Self.isRegularFile(path), let h = try? ELFHandle(path: path) else { return false }
            return link.identity.isEmpty || h.supplementaryIdentities.contains(link.identity)
        }
        if let p = paths.first(where: matches) { return p }
        guard let id = link.buildID else { return nil }
        let request = DebugFileRequest(buildID: id, modulePath: nil)
        for source in sources {
            for c in source.candidates(for: request) where matches(c.path) { return c.path }
        }
        return nil
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }
}
