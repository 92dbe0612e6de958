// `faultline symbolicate REPORT`: a crash report or event → backtrace text or symbolicated JSON.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineFiles
import FaultlineCoreDump

enum SymbolicateReportMode {
    static func run(
        input: String, json: Bool, crashedOnly: Bool = false, faultlineFrames: Bool = false, core: SymbolicateCoreMode.Options = .init(),
        symbolicator: Symbolicator
    ) -> Int32 {
        let data: Data
        var incomplete = false  // the input itself is (a core cut short): at best a partial result
        if input != "-", CoreFile.isCore(path: input) {
            // A core file: read into the crash report the crash core would have written, then
            // printed like one.
            guard let report = SymbolicateCoreMode.report(core: input, options: core) else { return ExitCode.inputError }
            (data, incomplete) = report
        } else if input != "-", SymbolicateMinidumpMode.isMinidump(path: input) {
            // A minidump: walked here into the event Crashpad's server side would make.
            guard let event = SymbolicateMinidumpMode.event(dump: input, locator: symbolicator.locator) else { return ExitCode.inputError }
            data = event
        } else if input == "-" {
            data = Data(readToEnd(0))
        } else {
            var st = stat()
            guard stat(input, &st) == 0 else {
                printError("\(input): no such file"); return ExitCode.inputError
            }
            if st.st_mode & S_IFMT == S_IFDIR { printError("\(input): is a directory, expected a crash report or event JSON"); return ExitCode.inputError }
            guard let d = FileManager.default.contents(atPath: input) else {
                printError("\(input): cannot read"); return ExitCode.inputError
            }
            data = d
        }
        let event: JSONValue
        do { event = try BacktraceText.event(from: data) } catch {
            // Not even the start of JSON: say every kind of input this reads, not only JSON's.
            let what =
                if case .notJSON = error, JSONParser.firstSignificantByte(data) != UInt8(ascii: "{") {
                    "not JSON (a crash report or event), a Linux core file or a minidump (\(data.isEmpty ? "empty" : "\(data.count) bytes"))"
                } else { error.description }
            printError("\(input == "-" ? "stdin" : input): \(what)")
            return ExitCode.inputError
        }
        let result = EventSymbolicator.symbolicate(event: event, with: symbolicator)
        if json {
            var bytes = [UInt8](result.event.serialized(pretty: true))
            bytes.append(10)
            guard writeAll(1, bytes) else { printError(standardOutputError()); return ExitCode.failure }
        } else {
            guard writeAll(1, Array(BacktraceText.render(event: result.event, crashedOnly: crashedOnly, showFaultlineFrames: faultlineFrames).utf8)) else {
                printError(standardOutputError()); return ExitCode.failure
            }
        }
        for note in symbolicator.notesForLoadedModules() { printError(note) }
        if result.unresolved == 0 { return incomplete ? ExitCode.partial : ExitCode.ok }
        printError("\(result.unresolved) of \(result.resolved + result.unresolved) frames could not be symbolicated")
        return result.resolved == 0 ? ExitCode.failure : ExitCode.partial
    }
}
