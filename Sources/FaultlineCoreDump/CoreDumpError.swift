// What can be wrong with a core file or its reading, each with a message that says what to do.
import FoundationEssentials

public enum CoreDumpError: Error, CustomStringConvertible, Equatable {
    /// Not an ELF core file at all.
    case notACore(String)
    /// A core this reader does not handle (another machine, PN_XNUM).
    case unsupported(String)
    /// The file ends before a structure its headers promise.
    case truncated(String)
    /// The notes hold no thread (NT_PRSTATUS): nothing to report.
    case noThreads
    /// libdwfl could not read the core.
    case unwinder(String)
    /// Reading, writing or the time budget of the pipe handler.
    case io(String)

    public var description: String {
        switch self {
        case .notACore(let why): return "not an ELF core file (\(why))"
        case .unsupported(let why): return "unsupported core file: \(why)"
        case .truncated(let what): return "core file is truncated: \(what) is missing"
        case .noThreads: return "core file has no thread status notes (NT_PRSTATUS)"
        case .unwinder(let why): return "libdwfl cannot read the core: \(why)"
        case .io(let why): return why
        }
    }
}
