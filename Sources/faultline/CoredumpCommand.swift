// `faultline coredump`: the kernel's core_pattern pipe handler; the work is in FaultlineCoreDump.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineCoreDump

enum CoredumpCommand {
    static let defaultSpool = "/var/spool/faultline/crashes"

    static let help = """
        usage: faultline coredump [options] PID TID SIGNAL TIME NAME [--then COMMAND [ARG...]]
               (as /proc/sys/kernel/core_pattern: |/usr/bin/faultline coredump %P %i %s %t %e)

        Reads a core file on stdin, as the kernel pipes it to a core_pattern handler, and writes a
        Faultline crash report (<event id>.crash.json: every thread's stack walked by libdwfl, the
        registers, the modules with build-ids, the signal) atomically into the spool directory,
        where `faultline crashes DIR` and the SDK's next-launch pickup (when DIR is an app's crash
        directory) turn it into a crash event. The core is never held in memory: only its notes
        and the memory an unwinder needs (each thread's stack, segments up to 64 KiB) go to a
        temporary file in the spool directory, removed afterwards. The arguments are what the
        kernel knows besides the core: PID (%P), the crashing thread (%i), the signal (%s), the time
        (%t, seconds since the epoch) and the thread's name (%e); any may be '-'.

        options:
          --spool DIR          where reports go (default $FAULTLINE_COREDUMP_SPOOL, else
                               \(defaultSpool)); created, mode 0700, when missing
          --keep-core MAX      also keep the whole core as <event id>.core when it is at most MAX
                               bytes (K, M, G suffixes); a larger core is not kept, and the report
                               says so
          --timeout SECONDS    the whole run's budget (default 60): reading stops at three quarters
                               of it, unwinding at the end; a hard stop ends the process 5 s later
          --debug-dir DIR      separate debug files for unwinding (repeatable)
          --then COMMAND...    last: also feed the whole core, as it comes, to COMMAND's stdin (another
                               core_pattern handler, e.g. /lib/systemd/systemd-coredump %P %u %g %s
                               %t %c %h); it is waited for until the budget ends
          -h, --help           this help

        exit codes:
          0  report written (its `core.incomplete` says when the core was cut short or the time ran out)
          1  the spool directory or the report could not be written
          2  usage error
          3  stdin is not an \(CoreLayout.architecture.rawValue) ELF core, or ended before its notes
        Errors go to stderr and to syslog (the kernel gives a pipe handler no terminal).
        """

    static func run(_ args: [String]) -> Int32 {
        var spool = ProcessInfo.processInfo.environment["FAULTLINE_COREDUMP_SPOOL"] ?? defaultSpool
        var keep: UInt64?
        var timeout = 60.0
        var debugDirs: [String] = []
        var positional: [String] = []
        var chained: [String]?
        var i = 0
        func value() -> String? {
            i += 1
            return i < args.count ? args[i] : nil
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help": print(help); return ExitCode.ok
            case "--spool":
                guard let v = value() else { return usage("--spool needs a directory") }
                spool = v
            case "--keep-core":
                guard let v = value(), let n = byteCount(v) else { return usage("--keep-core needs a size (bytes, or with K, M, G)") }
                keep = n
            case "--timeout":
                guard let v = value(), let t = Double(v), t > 0, t <= 3600 else { return usage("--timeout needs seconds (up to 3600)") }
                timeout = t
            case "--debug-dir":
                guard let v = value() else { return usage("--debug-dir needs a directory") }
                debugDirs.append(v)
            case "--then":
                chained = Array(args[(i + 1)...])
                guard chained?.first?.hasPrefix("/") == true else { return usage("--then needs a command by its absolute path") }
                i = args.count
            default:
                if a.hasPrefix("--") { return usage("unknown option '\(a)'; run 'faultline coredump --help'") }
                positional.append(a)
            }
            i += 1
        }
        func number(_ i: Int) -> Int? { i < positional.count ? Int(positional[i]) : nil }
        // Older kernels split the pattern after expanding it: a name with spaces arrives as
        // several arguments.
        let name = positional.count > 4 ? positional[4...].joined(separator: " ") : "-"
        let hints = CoreReportHints(
            pid: number(0), tid: number(1), signal: number(2), time: positional.count > 3 ? Double(positional[3]) : nil,
            threadName: name != "-" ? name : nil)
        // The hard stop: whatever libdwfl or the file system does, the kernel's wait ends.
        alarm(UInt32(timeout.rounded(.up)) + 5)
        var handler = CoredumpHandler(spoolDirectory: spool, hints: hints)
        handler.keepCoreMaximum = keep
        handler.timeBudget = .milliseconds(Int64(timeout * 1000))
        handler.debugDirectories = debugDirs
        handler.chainedCommand = chained
        do {
            let outcome = try handler.run(input: 0)
            if let why = outcome.incomplete { report("\(outcome.reportPath): incomplete: \(why)") }
            print(outcome.reportPath)
            return ExitCode.ok
        } catch {
            report("pid \(hints.pid.map(String.init) ?? "?"): \(error.description)")
            switch error {
            case .io: return ExitCode.failure
            default: return ExitCode.inputError
            }
        }
    }

    static func usage(_ message: String) -> Int32 {
        printError(message)
        return ExitCode.usage
    }

    /// "512", "64K", "100M", "2G".
    static func byteCount(_ s: String) -> UInt64? {
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = s.last, let unit = units[Character(last.uppercased())] {
            return UInt64(s.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        }
        return UInt64(s)
    }

    /// stderr and syslog: a handler started by the kernel has no terminal to print to.
    static func report(_ message: String) {
        printError("coredump: " + message)
        let text = strdup("faultline coredump: " + message)
        defer { free(text) }
        withVaList([text!]) { vsyslog(LOG_ERR | LOG_DAEMON, "%s", $0) }
    }
}
