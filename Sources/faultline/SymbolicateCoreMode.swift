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

    /// The report's JSON, or nil after saying on stderr why the core cannot be read.
    static func report(core: String, options: Options) -> Data? {
        do {
            let json = try CoreFile.report(
                path: core, executable: options.executable, debugDirectories: options.debugDirectories,
                provenance: CoreCrashReport.Provenance(source: "file"))
            return json.serialized()
        } catch {
            printError("\(core): \(error.description)")
            return nil
        }
    }
}
