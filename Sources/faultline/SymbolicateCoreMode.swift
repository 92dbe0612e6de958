// `faultline symbolicate CORE [--exe BIN]`: a Linux core file → the crash report its threads make
// (FaultlineCoreDump), symbolicated and printed as report mode prints every report.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineProtocol
import FaultlineCoreDump

enum SymbolicateCoreMode {
    struct Options {
        /// `--exe`: the program's file, when the path the core names is gone or another build.
        var executable: String?
        /// `--debug-dir`: separate debug files for unwinding (their .debug_frame) too.
        var debugDirectories: [String] = []
    }

    /// The report's JSON and whether it is incomplete (an executable of another build refused,
    /// a core cut short: said on stderr), or nil after saying on stderr why the core cannot be read.
    static func report(core: String, options: Options) -> (json: Data, incomplete: Bool)? {
        do {
            var incomplete = false
            let json = try CoreFile.report(
                path: core, executable: options.executable, debugDirectories: options.debugDirectories,
                provenance: CoreCrashReport.Provenance(source: "file"),
                warn: {
                    printError("\(core): \($0)")
                    incomplete = true
                })
            return (json.serialized(), incomplete)
        } catch {
            printError("\(core): \(error.description)")
            return nil
        }
    }
}
