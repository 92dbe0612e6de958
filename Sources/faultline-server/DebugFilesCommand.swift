// `faultline debug-files split|upload`: named after sentry-cli's `debug-files` group, so users of
// either tool find the release steps where they expect them. `split` calls FaultlineUpload's
// DebugFileSplitter; `upload` is `faultline upload`.
import Foundation
import FaultlineCommandLine
import FaultlineUpload

enum DebugFilesCommand {
    static let usage = """
        usage: faultline debug-files split [--output DIR] [--json] PATH…
               faultline debug-files upload …   (the same as faultline upload)

        split: for each ELF file with a build-id under PATH… (files or directories, links followed),
        moves its DWARF and symbol table into DIR/.build-id/xx/rest.debug, strips the file in place
        and adds a .gnu_debuglink to it (elfutils' eu-strip -f). Ship the stripped files; upload DIR
        (faultline upload DIR) and keep it: faultline symbolicate --debug-dir DIR and gdb read it.
        Files already split, and debug files themselves, are left alone.

          --output DIR   the debug-file tree (default ./debug-files)
          --json         one JSON object per file on stdout

        exit codes: 0 every file split (or already split), 2 usage error, 3 a path is missing or no
                    ELF file with a build-id was found, 4 some files failed, 1 eu-strip is missing
        """

    static func run(_ args: [String]) -> Int32 {
        guard let sub = args.first else { printError("debug-files: which subcommand?\n\(usage)"); return ExitCode.usage }
        switch sub {
        case "-h", "--help": print(usage); return ExitCode.ok
        case "upload": return UploadCommand.run(Array(args.dropFirst()))
        case "split": return split(Array(args.dropFirst()))
        default: printError("debug-files: unknown subcommand '\(sub)'\n\(usage)"); return ExitCode.usage
        }
    }

    static func split(_ args: [String]) -> Int32 {
        var output = "debug-files", json = false
        var paths: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--output", "-o":
                guard let v = it.next() else { printError("debug-files split: --output needs a directory"); return ExitCode.usage }; output = v
            case "--json": json = true
            default:
                if a.hasPrefix("-") { printError("debug-files split: unknown option '\(a)'\n\(usage)"); return ExitCode.usage }
                paths.append(a)
            }
        }
        guard !paths.isEmpty else { printError("debug-files split: give at least one file or directory\n\(usage)"); return ExitCode.usage }
        let found = DebugFileScanner.elfFiles(paths)
        for m in found.missing { printError("debug-files split: no such file or directory: \(m)") }
        if !found.missing.isEmpty { return ExitCode.inputError }
        guard !found.files.isEmpty else {
            printError("debug-files split: no ELF files with a build-id under \(paths.map(DebugFileScanner.cleanPath).joined(separator: " "))")
            return ExitCode.inputError
        }
        let splitter: DebugFileSplitter
        do { splitter = try DebugFileSplitter(outputDirectory: output) } catch {
            printError("debug-files split: \(error)")
            return ExitCode.failure
        }
        var failed = 0, done = 0, already = 0
        for f in found.files {
            let o = splitter.split(f)
            switch o.state {
            case .split: done += 1
            case .alreadySplit: already += 1
            case .failed: failed += 1
            }
            if json {
                print(o.json.jsonString)
            } else {
                switch o.state {
                case .split: print("split \(o.buildID?.hex ?? "?") \(o.binary) (\(o.sizeBefore) → \(o.sizeAfter) bytes) → \(o.debugFile ?? "")")
                case .alreadySplit: print("already split \(o.binary)")
                case .failed: print("FAILED \(o.binary): \(o.detail ?? "")")
                }
            }
        }
        if !json { print("\(done) split, \(already) already split, \(failed) failed; debug files in \(splitter.outputDirectory)") }
        if failed == 0 { return ExitCode.ok }
        return failed == found.files.count ? ExitCode.failure : ExitCode.partial
    }
}
