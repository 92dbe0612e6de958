// `faultline symbolicate DUMP`: a Crashpad/Breakpad minidump → its Sentry event (every thread
// walked by FaultlineMinidump: CFI from the module files this machine has, then frame pointers
// and stack scanning, each frame marked), symbolicated and printed as report mode prints every
// event. The module files are found as the symbolicator finds them (--obj/--exe, debug
// directories, the module's own path when its build-id matches, /usr/lib/debug, debuginfod).
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineMinidump
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineFiles

enum SymbolicateMinidumpMode {
    /// Whether the file at `path` starts with the minidump signature.
    static func isMinidump(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var prefix = [UInt8](repeating: 0, count: 4)
        guard retryingOnInterrupt({ pread(fd, &prefix, prefix.count, 0) }) == prefix.count else { return false }
        return MinidumpHeader.starts(prefix)
    }

    /// The dump's event as JSON, or nil after saying on stderr why the dump cannot be read.
    static func event(dump path: String, locator: DebugFileLocator) -> Data? {
        guard let bytes = FileManager.default.contents(atPath: path) else {
            printError("\(path): cannot read")
            return nil
        }
        let dump: Minidump
        do { dump = try Minidump(bytes: [UInt8](bytes)) } catch {
            printError("\(path): \(error)")
            return nil
        }
        let lookup = ModuleFileLookup { buildID, modulePath, kind in
            for path in candidatePaths(modulePath, architecture: dump.systemInfo?.architecture.flatMap(CPUArchitecture.init(name:))) {
                let found = locator.locate(buildID: buildID, modulePath: path)
                if let file = kind == .executable ? found.moduleFile : (found.debugFile ?? found.symbolsOnlyFile) { return file }
            }
            return nil
        }
        let walk = MinidumpStackwalker(lookup: lookup).walk(dump)
        // The same dump gives the same event id.
        let event = MinidumpEvent.make(dump: dump, walk: walk, eventID: SwiftBacktraceEvent.eventID(for: bytes), timestamp: 0)
        return event.serialized()
    }

    /// Where a module named in a dump may be on this machine: its path, or — Crashpad names
    /// system libraries by soname — the library directories the loader searches. A file found
    /// there is used only when its build-id is the module's (the locator's rule).
    /// The multiarch directories are the dump's architecture's (the host's when it names none).
    static func candidatePaths(_ modulePath: String, architecture: CPUArchitecture?) -> [String] {
        if modulePath.hasPrefix("/") || modulePath.isEmpty { return [modulePath] }
        let tuple = (architecture ?? CPUArchitecture.host ?? AMD64Context.architecture).multiarchTuple
        return ["/lib/\(tuple)/", "/usr/lib/\(tuple)/", "/lib64/", "/usr/lib64/", "/lib/", "/usr/lib/"].map { $0 + modulePath }
    }
}
