// Where is the debug file for a module? Standard strategies, tried in a fixed order.
import FaultlineProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Finds the file holding DWARF for a module, by build-id first. Strategies, in order:
/// 1. `explicitFiles` (for example `--debug-file` or `--obj`);
/// 2. each of `debugDirectories` in the `.build-id/xx/rest.debug` layout (also `rest`, for
///    executables, and the same layout when the directory *is* the `.build-id` folder);
/// 3. the module's own path, when its build-id matches;
/// 4. the module's `.gnu_debuglink` beside it, in `.debug/` beside it, in each debug directory
///    and under `/usr/lib/debug/<module dir>/` (CRC32 checked);
/// 5. `/usr/lib/debug/.build-id/xx/rest.debug`.
/// A file whose build-id differs from the one asked for is never used; it is reported instead.
public struct DebugFileLocator: Sendable {
    public var explicitFiles: [String]
    public var debugDirectories: [String]
    public var searchModulePath: Bool
    public var searchSystem: Bool
    /// Root of the system debug tree; tests point it elsewhere.
    public var systemDebugRoot: String = "/usr/lib/debug"

    public init(explicitFiles: [String] = [], debugDirectories: [String] = [], searchModulePath: Bool = true, searchSystem: Bool = true) {
        self.explicitFiles = explicitFiles
        self.debugDirectories = debugDirectories
        self.searchModulePath = searchModulePath
        self.searchSystem = searchSystem
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
        /// Which strategy found `debugFile`.
        public var strategy: String?
    }

    public func locate(buildID: BuildID?, modulePath: String?) -> Location {
        var loc = Location()
        var seen = Set<String>()

        /// Returns true when `path` has DWARF and matches (search ends).
        func consider(_ path: String, strategy: String, crc: UInt32? = nil) -> Bool {
            guard !seen.contains(path) else { return false }
            seen.insert(path)
            guard let info = try? ELFInfo.read(path: path) else { return false }
            // Identity: the build-id must match; a file without one is only accepted when nothing
            // was asked for, or when the debuglink CRC (checked next) vouches for it.
            if let buildID {
                if let found = info.buildID {
                    guard found == buildID else { loc.mismatched.append(path); return false }
                } else if crc == nil {
                    loc.mismatched.append(path); return false
                }
            }
            if let crc, CRC32.ofFile(path) != crc { loc.mismatched.append(path); return false }
            // DWARF libdw cannot decompress (zstd on 0.188) counts as symbols only; keep looking.
            if info.hasDebugInfo && !info.hasUnreadableDebugInfo { loc.debugFile = path; loc.strategy = strategy; return true }
            if info.hasSymbols && loc.symbolsOnlyFile == nil { loc.symbolsOnlyFile = path }
            return false
        }

        for f in explicitFiles where consider(f, strategy: "explicit") { return withModule(loc, buildID, modulePath) }
        if let buildID {
            let (dir, rest) = buildID.buildIDPathComponents
            for d in debugDirectories {
                var candidates = ["\(d)/.build-id/\(dir)/\(rest).debug", "\(d)/.build-id/\(dir)/\(rest)"]
                if d.hasSuffix(".build-id") || d.hasSuffix(".build-id/") { candidates += ["\(d)/\(dir)/\(rest).debug", "\(d)/\(dir)/\(rest)"] }
                for c in candidates where exists(c) && consider(c, strategy: "debug-dir") { return withModule(loc, buildID, modulePath) }
            }
        }
        var link: ELFInfo.DebugLink? = nil
        if searchModulePath, let modulePath, exists(modulePath) {
            if consider(modulePath, strategy: "module") { return withModule(loc, buildID, modulePath) }
            if let info = try? ELFInfo.read(path: modulePath), buildID == nil || info.buildID == buildID { link = info.debugLink }
        }
        if let link, let modulePath {
            let dir = modulePath.contains("/") ? String(modulePath[..<modulePath.lastIndex(of: "/")!]) : "."
            var candidates = ["\(dir)/\(link.name)", "\(dir)/.debug/\(link.name)"]
            candidates += debugDirectories.map { "\($0)/\(link.name)" }
            if searchSystem { candidates.append("\(systemDebugRoot)\(dir.hasPrefix("/") ? dir : "/" + dir)/\(link.name)") }
            for c in candidates where c != modulePath && exists(c) && consider(c, strategy: "debuglink", crc: link.crc) {
                return withModule(loc, buildID, modulePath)
            }
        }
        if searchSystem, let buildID {
            let (dir, rest) = buildID.buildIDPathComponents
            let c = "\(systemDebugRoot)/.build-id/\(dir)/\(rest).debug"
            if exists(c) && consider(c, strategy: "system") { return withModule(loc, buildID, modulePath) }
        }
        return withModule(loc, buildID, modulePath)
    }

    private func withModule(_ l: Location, _ buildID: BuildID?, _ modulePath: String?) -> Location {
        var loc = l
        if let modulePath, exists(modulePath), let info = try? ELFInfo.read(path: modulePath),
           buildID == nil || info.buildID == buildID {
            loc.moduleFile = modulePath
        }
        return loc
    }

    private func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }
}
