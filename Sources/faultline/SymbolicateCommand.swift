// `faultline symbolicate`: argument parsing; the work is in FaultlineSymbolication.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineFiles
import FaultlineCoreDump

enum SymbolicateCommand {
    static let help = """
        usage: faultline symbolicate [options] REPORT.json...       report mode
               faultline symbolicate [options] CORE [--exe BIN]      core mode (a Linux core file)
               faultline symbolicate [options] DUMP [--exe BIN]      minidump mode (Crashpad/Breakpad)
               faultline symbolicate [options] --obj FILE [ADDR...]  address mode (addresses on stdin if none given)

        Report mode reads a Faultline crash report (*.crash.json, as the crash handler writes it), a
        Swift runtime JSON crash log (SWIFT_BACKTRACE=enable=yes,format=json,output-to=DIR; every
        thread is printed, the crashing one first) or a Sentry event JSON ('-' for stdin) and prints
        a backtrace: frame number, address, function,
        file:line:column, inlined frames marked, and the module. --json prints the event with its
        frames filled in instead (inlined calls expanded into frames, caller first, Sentry-style).
        Core mode reads a Linux core file (ELF type ET_CORE, as the kernel writes it): every thread is
        walked with elfutils' libdwfl (the files the core names, found by build-id) and printed as a
        report is, the crashing thread first under its signal; --exe BIN gives the program when the
        path the core names is gone or another build. Minidump mode reads a Crashpad/Breakpad
        minidump (MDMP): every thread is walked with the CFI of the module files found below, then
        frame pointers and stack scanning (each frame marked context/cfi/fp/scan), and printed as a
        report is; --exe BIN gives the program's file. Several reports are printed one after another, each under a `==> path <==` header; the exit
        code is the worst of theirs.

        Address mode takes ELF virtual addresses of FILE, one per line on stdin or as arguments, read
        as llvm-symbolizer reads them (0x hex, 0b binary, a leading 0 octal, otherwise decimal), and
        prints what `llvm-symbolizer --obj=FILE --inlines` prints: a function line and a
        path:line:column line per frame, innermost first, then a blank line; `??` and `??:0:0` where
        nothing is known. Swift and C++ names are demangled (--no-demangle-swift: C++ only, as
        llvm-symbolizer does).

        Debug files are found by build-id, in order: --debug-file files; each --debug-dir in the
        .build-id/xx/rest.debug layout; the module's own path; its .gnu_debuglink (beside it, in
        .debug/, in each --debug-dir, under /usr/lib/debug); /usr/lib/debug/.build-id; last, the
        debuginfod servers in DEBUGINFOD_URLS (space-separated; files and "not found" answers cached
        under the cache directory's debuginfod/, or DEBUGINFOD_CACHE_PATH; DEBUGINFOD_TIMEOUT seconds
        without progress, default 10). A file with another build-id is never used. A dwz'd debug
        file's supplementary file (.gnu_debugaltlink, .debug_sup) is looked for at the path it names
        (relative to the debug file), then by its build-id the same way; split DWARF .dwo files beside
        the binary or under the unit's compilation directory (.dwp packages need elfutils 0.191+).
        Without DWARF, ELF symbols give function names only.

        options:
          --obj FILE, -e FILE     address mode on FILE (an executable, a library or a debug file)
          --exe FILE              the same; before a core file: the core's program
          --debug-dir DIR         look for debug files in DIR (repeatable)
          --debug-file FILE       use FILE as a debug file when its build-id matches (repeatable)
          --cache-dir DIR         keep lookup indexes in DIR (default $XDG_CACHE_HOME/faultline,
                                  else ~/.cache/faultline)
          --no-cache              neither read nor write persisted indexes
          --rebuild-index         address mode: build FILE's index afresh and persist it
          --no-system             do not search /usr/lib/debug
          --no-debuginfod         do not ask the servers in DEBUGINFOD_URLS
          --threads N             threads for building a large file's index: 2 (default, when two
                                  CPUs are available) or 1 (less CPU in all, more wall time)
          --json                  report mode: print the symbolicated event as JSON
          --crashed-only          report mode: print only the crashing thread (every thread by default)
          --faultline-frames      report mode: also print Faultline's own frames (hidden by default)
          --no-demangle           print names as the binary spells them
          --no-demangle-swift     address mode: demangle C++ only, exactly like llvm-symbolizer
          --functions=KIND, -f=KIND
                                  address mode: linkage (default) prints each frame's function
                                  line; none prints no function line (nor ELF symbols' file names),
                                  as llvm-symbolizer does; short is not supported
          --inlines, -i, --functions, -f, --demangle, -C
                                  accepted for llvm-symbolizer compatibility (always on)
          Options other than those taking a value refuse `--option=value`.
          -h, --help              this help

        exit codes:
          0  every frame or address resolved (address mode: the object was read; unknown
             addresses print ?? as llvm-symbolizer does)
          1  report mode: no frame could be resolved
          2  usage error (unknown option, missing value, a value given to an option that takes
             none, no addresses on stdin)
          3  input not found or unreadable: missing file, a directory, not an ELF file,
             truncated ELF, not a crash report, Swift crash log or event with stack frames, a
             core file libdwfl cannot read
          4  partial: some frames unresolved (report mode), or some input lines were not
             addresses (address mode; they print ?? as in llvm-symbolizer)
        """

    struct Options {
        var object: String?
        var addresses: [String] = []
        var inputs: [String] = []
        var debugDirs: [String] = []
        var debugFiles: [String] = []
        var cacheDir: String?
        var noCache = false
        var rebuildIndex = false
        var noSystem = false
        var noDebuginfod = false
        var threads = 2
        var json = false
        var crashedOnly = false
        var faultlineFrames = false
        var demangle = true
        var demangleSwift = true
        var functionNames = FunctionNameKind.linkage
    }

    struct UsageError: Error { let message: String }

    static func parse(_ args: [String]) -> Result<Options, UsageError> {
        var o = Options()
        var i = 0
        func value(_ name: String) -> String? {
            i += 1
            return i < args.count ? args[i] : nil
        }
        // llvm-symbolizer: a bare --functions (or -f) anywhere wins over any --functions=KIND.
        var functionsFlag = false
        var functionsValue: String? = nil
        while i < args.count {
            let a = args[i]
            var name = a, inline: String? = nil
            if a.hasPrefix("--") || a.hasPrefix("-f="), let eq = a.firstIndex(of: "=") {
                name = String(a[..<eq]); inline = String(a[a.index(after: eq)...])
            }
            // Only options that take a value may be spelled `--option=value`; on any other, the value
            // was dropped before (`--no-demangle=false` turned demangling off), as llvm refuses it.
            if let inline, !SymbolicateCommand.optionsTakingValues.contains(name), name.hasPrefix("-"), name != "-" {
                return .failure(UsageError(message: "\(name) takes no value (got '\(name)=\(inline)'); run 'faultline symbolicate --help'"))
            }
            switch name {
            case "--obj", "--exe", "-e":
                guard let v = inline ?? value(name) else { return .failure(UsageError(message: "\(name) needs a file")) }
                o.object = v
            case "--debug-dir":
                guard let v = inline ?? value(name) else { return .failure(UsageError(message: "--debug-dir needs a directory")) }
                o.debugDirs.append(v)
            case "--debug-file":
                guard let v = inline ?? value(name) else { return .failure(UsageError(message: "--debug-file needs a file")) }
                o.debugFiles.append(v)
            case "--cache-dir":
                guard let v = inline ?? value(name) else { return .failure(UsageError(message: "--cache-dir needs a directory")) }
                o.cacheDir = v
            case "--threads":
                guard let v = inline ?? value(name), let n = Int(v), n == 1 || n == 2 else { return .failure(UsageError(message: "--threads needs 1 or 2")) }
                o.threads = n
            case "--no-cache": o.noCache = true
            case "--rebuild-index": o.rebuildIndex = true
            case "--no-system": o.noSystem = true
            case "--no-debuginfod": o.noDebuginfod = true
            case "--json": o.json = true
            case "--crashed-only": o.crashedOnly = true
            case "--faultline-frames": o.faultlineFrames = true
            case "--no-demangle": o.demangle = false
            case "--no-demangle-swift": o.demangleSwift = false
            case "--functions", "-f":
                if let inline { functionsValue = inline } else { functionsFlag = true }
            case "--inlines", "-i", "--demangle", "-C": break
            case "-": o.inputs.append(a)
            default:
                if a.hasPrefix("-") { return .failure(UsageError(message: "unknown option '\(a)'; run 'faultline symbolicate --help'")) }
                o.inputs.append(a)
            }
            i += 1
        }
        if o.object != nil { o.addresses = o.inputs; o.inputs = [] }
        if !functionsFlag, let functionsValue {
            switch functionsValue {
            case "none": o.functionNames = .none
            case "short":
                return .failure(
                    UsageError(message: "--functions=short is not supported (the index keeps linkage names only); use --functions or --functions=none"))
            default: o.functionNames = .linkage  // llvm-symbolizer reads any other value as `linkage`
            }
        }
        return .success(o)
    }

    /// The options that take a value, which may also be spelled `--option=value`.
    static let optionsTakingValues: Set<String> = ["--obj", "--exe", "-e", "--debug-dir", "--debug-file", "--cache-dir", "--threads", "--functions", "-f"]

    /// An argument that names an existing file and cannot be an address (`0x…`, decimal, octal).
    static func isNamedFile(_ argument: String) -> Bool {
        let isAddress = Array(argument.utf8).withUnsafeBytes { LLVMStyleSymbolizer.parseAddress($0, 0, $0.count) != nil }
        var st = stat()
        return !isAddress && stat(argument, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    static func run(_ args: [String]) -> Int32 {
        if args.contains("-h") || args.contains("--help") { print(help); return ExitCode.ok }
        var options: Options
        switch parse(args) {
        case .failure(let e): printError(e.message); return ExitCode.usage
        case .success(let o): options = o
        }
        // `--exe BIN CORE` (or DUMP): --exe names the crashed program (llvm-symbolizer's --exe, an
        // alias of --obj, is address mode only when what follows is not a core file or minidump).
        // A file that is neither (a damaged dump, an empty file) is an input too, refused as one:
        // read as an address it printed `??` and said nothing of the file.
        var core = SymbolicateCoreMode.Options(debugDirectories: options.debugDirs)
        if let object = options.object, !options.addresses.isEmpty,
            options.addresses.allSatisfy({ CoreFile.isCore(path: $0) || SymbolicateMinidumpMode.isMinidump(path: $0) || isNamedFile($0) })
        {
            core.executable = object
            options.debugFiles.append(object)
            options.inputs = options.addresses
            options.addresses = []
            options.object = nil
        }
        let locator = DebugFileLocator(
            explicitFiles: options.debugFiles, debugDirectories: options.debugDirs,
            searchModulePath: true, searchSystem: !options.noSystem,
            debuginfod: options.noDebuginfod ? nil : DebuginfodClient.fromEnvironment(cacheDirectory: options.cacheDir))
        let symbolicator = Symbolicator(locator: locator, indexCacheDirectory: options.cacheDir, persistIndexes: !options.noCache)
        // A full index of a large file on two threads: less wall time for a little more CPU and
        // memory (docs/SYMBOLICATION.md, "Benchmark"). Below 1 MiB of DWARF or with one CPU the
        // builder stays on one thread by itself.
        symbolicator.parallelFullBuild = options.threads >= 2
        if let object = options.object {
            if options.rebuildIndex, let id = (try? ELFInfo.read(path: object))?.buildID {
                symbolicator.removePersistedIndex(buildID: id)
            }
            return SymbolicateAddressMode.run(
                object: object, addresses: options.addresses, demangle: options.demangle,
                demangleSwift: options.demangleSwift, functionNames: options.functionNames, fullIndex: options.rebuildIndex,
                symbolicator: symbolicator)
        }
        guard !options.inputs.isEmpty else {
            printError("nothing to symbolicate: give a crash report or event, or --obj FILE; see --help")
            return ExitCode.usage
        }
        if options.inputs.count == 1 {
            return SymbolicateReportMode.run(
                input: options.inputs[0], json: options.json, crashedOnly: options.crashedOnly, faultlineFrames: options.faultlineFrames,
                core: core, symbolicator: symbolicator)
        }
        // Several reports (`faultline symbolicate crashes/*.crash.json`): one after another, each
        // under a header in text mode; the exit code is the worst of theirs.
        var codes: [Int32] = []
        for (i, input) in options.inputs.enumerated() {
            if !options.json { writeAll(1, Array(((i > 0 ? "\n" : "") + "==> \(input) <==\n").utf8)) }
            codes.append(
                SymbolicateReportMode.run(
                    input: input, json: options.json, crashedOnly: options.crashedOnly, faultlineFrames: options.faultlineFrames, core: core,
                    symbolicator: symbolicator))
        }
        if codes.contains(ExitCode.inputError) { return ExitCode.inputError }
        if codes.allSatisfy({ $0 == ExitCode.ok }) { return ExitCode.ok }
        if codes.allSatisfy({ $0 == ExitCode.failure }) { return ExitCode.failure }
        return ExitCode.partial
    }
}
