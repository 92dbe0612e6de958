// `faultline symbolicate --obj FILE`: llvm-symbolizer-compatible address mode.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineSymbolication
import FaultlineFiles

enum SymbolicateAddressMode {
    static func run(
        object: String, addresses: [String], demangle: Bool, demangleSwift: Bool, functionNames: FunctionNameKind = .linkage,
        fullIndex: Bool = false, symbolicator: Symbolicator
    ) -> Int32 {
        var input: [UInt8]
        if addresses.isEmpty {
            input = readToEnd(0)
            if input.allSatisfy({ $0 == 10 || $0 == 32 || $0 == 9 || $0 == 13 }) {
                printError("no addresses given: pass them as arguments or one per line on stdin")
                return ExitCode.usage
            }
        } else {
            // Not `joined(separator:)`: its generic form looks up conformances at run time, a
            // visible part of a one-address run.
            input = []
            for (i, address) in addresses.enumerated() {
                if i > 0 { input.append(10) }
                input.append(contentsOf: address.utf8)
            }
        }
        var symbolizer: LLVMStyleSymbolizer
        // The addresses go in first: a cold start parses only the units that cover them.
        let made = input.withUnsafeBytes { b in
            Result { () throws(ELFError) in
                try LLVMStyleSymbolizer(objectFile: object, symbolicator: symbolicator, input: fullIndex ? nil : b)
            }
        }
        switch made {
        case .success(let s): symbolizer = s
        case .failure(let error):
            printError(error.description)
            return ExitCode.inputError
        }
        symbolizer.demangle = demangle
        symbolizer.demangleSwift = demangleSwift
        symbolizer.functionNames = functionNames
        if !symbolizer.hasDWARF, let info = try? ELFInfo.read(path: object), info.hasUnreadableDebugInfo {
            printError(
                "\(object): its DWARF is \(info.debugCompression ?? "")-compressed, which this libdw cannot read (zstd needs elfutils 0.189+); using ELF symbols only. Recompress with 'objcopy --compress-debug-sections=zlib'."
            )
        }
        for note in symbolizer.notes { printError("\(object): \(note)") }
        if symbolizer.unresolvedReason == .missingSupplementaryFile {
            printError(
                "\(object): its debug file was made by dwz and the supplementary file it names was not found, and it has no ELF symbols to fall back on; addresses print as ??"
            )
        } else if !symbolizer.hasDebugInformation {
            printError("\(object): no debug information or symbols found (build-id or debuglink did not match, or the file is stripped); addresses print as ??")
        }
        // The error is kept with the failure: a large input is written from two threads, and
        // errno is each thread's own.
        final class WriteFailure: @unchecked Sendable { var error: Int32? = nil }
        let output = WriteFailure()
        let write = { (bytes: UnsafeRawBufferPointer) in
            if output.error == nil && !writeAll(1, bytes) { output.error = errno }
        }
        // The symbolizer read the input's lines when it was made (unless it builds the full index).
        let summary = symbolizer.hasInput ? symbolizer.run(write: write) : input.withUnsafeBytes { symbolizer.run(input: $0, write: write) }
        if let error = output.error { printError(standardOutputError(error)); return ExitCode.failure }
        if summary.invalidLines > 0 {
            printError("\(summary.invalidLines) input line(s) were not addresses (0x hex, decimal, 0 octal, 0b binary); they print ?? like llvm-symbolizer")
            return ExitCode.partial
        }
        return ExitCode.ok
    }
}
