// What the server and the upload client need to know about a debug file, read from its own bytes
// by the symbolicator's ELF reader (libelf): is it an ELF, its GNU build-id, whether it carries DWARF,
// a symbol table, and code (an executable or library rather than a debug-only companion).
import FoundationEssentials
import FaultlineProtocol

public struct ELFSummary: Sendable, Equatable {
    public var buildID: BuildID
    public var hasDebugInfo: Bool
    public var hasSymbols: Bool
    /// Has loadable code, as opposed to an `objcopy --only-keep-debug` companion file.
    public var isExecutable: Bool
    /// The build-id of the supplementary file this one's DWARF needs (`dwz -m`), if it names one.
    public var supplementaryBuildID: BuildID? = nil

    /// Messages never include the server's own paths (the file sits in a staging directory).
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notELF
        case unsupported(String)
        case truncated(String)
        case noBuildID
        public var description: String {
            switch self {
            case .notELF: return "not an ELF file (no \\x7fELF magic); only ELF debug files and executables are accepted"
            case .unsupported(let s): return "unsupported ELF: \(s)"
            case .truncated(let s): return "truncated or corrupt ELF: \(s)"
            case .noBuildID: return "the ELF file has no GNU build-id note (link with -Wl,--build-id)"
            }
        }
    }

    public static func read(path: String) throws(Failure) -> ELFSummary {
        let relocatable = "a relocatable object file (.o); upload the linked executable or library"
        let info: ELFInfo
        do { info = try ELFInfo.read(path: path) } catch {
            switch error {
            case .notELF, .isDirectory: throw .notELF
            case .notFound, .unreadable: throw .truncated("cannot read the file")
            case .truncated: throw .truncated("sections or headers lie beyond the end of the file")
            case .malformed(_, let why): throw .truncated(why)
            case .relocatable: throw .unsupported(relocatable)
            }
        }
        // `dwz -m` writes the DWARF its files share as a relocatable file with a build-id (the
        // name its files give it): debug-only, and as needed as they are. An object file has no
        // build-id (the linker adds it).
        var isSupplementary = false
        if info.kind == .relocatable {
            guard info.buildID != nil, !info.hasSymbols, let handle = try? ELFHandle(path: path),
                handle.sections().contains(where: { $0.name.hasPrefix(".debug_") })
            else { throw .unsupported(relocatable) }
            isSupplementary = true
        }
        guard let id = info.buildID else { throw .noBuildID }
        if info.hasUnreadableDebugInfo {
            throw .unsupported("its DWARF is zstd-compressed, which this server's libdw cannot read; relink with --compress-debug-sections=zlib")
        }
        let hasCode = info.kind == .executable || info.kind == .sharedObject
        // A supplementary file's DWARF is its dependents' (it may hold no unit of its own, only strings).
        var summary = ELFSummary(buildID: id, hasDebugInfo: info.hasDebugInfo || isSupplementary, hasSymbols: info.hasSymbols, isExecutable: hasCode)
        if info.hasDebugInfo { summary.supplementaryBuildID = (try? ELFHandle(path: path))?.supplementaryLink?.buildID }
        return summary
    }
}
