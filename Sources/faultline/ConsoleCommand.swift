// `faultline console FILE…`: follow file logs or stderr captures live, coloured and filtered.
import FaultlineProtocol
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineFiles

enum ConsoleCommand {
    static let help = """
        usage: faultline console FILE… [-n LINES] [--level LEVEL] [--grep TEXT] [--regex PATTERN]
                                [--color auto|always|never] [--no-follow]

        Shows the last lines of each file (default 10), then follows them like `tail -F`: a file that
        does not exist yet is waited for (and shown from its start when it appears); a file log's
        trim (the file is atomically replaced by its newer part, or compacted in place on a full
        disk) is followed without repeating or losing lines, as long as the file is not trimmed
        twice within one 50 ms poll (a whole cap of output in 50 ms); if it is, the lines no trim
        kept are gone and a dimmed note says so. A file deleted and created anew, or truncated by
        someone else, is shown from its start, without a note. Lines in the file-log format are shown as
        `TIMESTAMP LEVEL message {attributes} (file:line)`, coloured by level when stdout is a
        terminal and NO_COLOR is not set; other lines (a stderr capture) are shown as they are.

          --level LEVEL    only lines at or above LEVEL (trace debug info notice warning error critical);
                           lines without a level (stderr) are kept
          --grep TEXT      only lines containing TEXT
          --regex PATTERN  only lines matching the regular expression (Swift Regex syntax: ICU-like,
                           matched by Unicode scalar)
          --no-follow      print the last lines and exit

        Ends with exit code 0 on Ctrl-C (SIGINT), SIGTERM, or when stdout is closed (a pipe into `head`).
        exit codes: 0 ok, 2 usage error, 3 a file cannot be read (or, with --no-follow, does not exist)
        """

    nonisolated(unsafe) static var stop: sig_atomic_t = 0

    static func run(_ args: [String]) -> Int32 {
        var files: [String] = []
        var count = 10
        var level: LogLevel?
        var grep: String?
        var regex: Regex<AnyRegexOutput>?
        var colour = "auto"
        var follow = true
        var i = 0
        func value() -> String? { i += 1; return i < args.count ? args[i] : nil }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help": print(help); return ExitCode.ok
            case "-n": guard let v = value().flatMap(Int.init), v >= 0 else { printError("-n needs a number"); return ExitCode.usage }; count = v
            case "--level":
                guard let v = value().flatMap(LogLevel.init(name:)) else {
                    printError("--level needs one of trace debug info notice warning error critical"); return ExitCode.usage
                }
                level = v
            case "--grep": guard let v = value() else { printError("--grep needs text"); return ExitCode.usage }; grep = v
            case "--regex":
                guard let v = value() else { printError("--regex needs a pattern"); return ExitCode.usage }
                do { regex = try Regex(v).matchingSemantics(.unicodeScalar) } catch { printError("--regex: invalid pattern \(v)"); return ExitCode.usage }
            case "--color", "--colour":
                guard let v = value(), ["auto", "always", "never"].contains(v) else { printError("--color needs auto, always or never"); return ExitCode.usage }
                colour = v
            case "--no-follow": follow = false
            default:
                if a.hasPrefix("-") && a != "-" { printError("unknown option \(a); see faultline console --help"); return ExitCode.usage }
                files.append(a)
            }
            i += 1
        }
        guard !files.isEmpty else { printError("no file given; see faultline console --help"); return ExitCode.usage }
        for f in files where access(f, R_OK) != 0 {
            // A file that does not exist yet is waited for, like `tail -F`; one that cannot be read is an error.
            guard follow && errno == ENOENT else { printError("\(f): cannot read: \(String(cString: strerror(errno)))"); return ExitCode.inputError }
            printError("\(f) does not exist yet; waiting for it")
        }
        let useColour = colour == "always" || (colour == "auto" && LogColour.wanted(fileDescriptor: 1))

        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT, consoleStopHandler)
        signal(SIGTERM, consoleStopHandler)
        let followers = files.map(LogFollower.init(path:))
        let prefix = files.count > 1
        func emit(_ raw: [UInt8], _ file: String) -> Bool {
            guard let text = render(raw, level: level, grep: grep, regex: regex, colour: useColour) else { return true }
            return writeOut((prefix ? PathName.last(file) + ": " : "") + text + "\n")
        }
        for (f, path) in zip(followers, files) {
            for l in f.start(lastLines: count) where !emit(l, path) { return ExitCode.ok }
        }
        guard follow else { return ExitCode.ok }
        var gaps = followers.map(\.gaps)
        while stop == 0 {
            var any = false
            for (k, (f, path)) in zip(followers, files).enumerated() {
                let new = f.poll()
                if f.gaps != gaps[k] {
                    // Trimmed twice between two polls: say so rather than pretend the output is whole.
                    gaps[k] = f.gaps
                    let note = "… some lines of \(PathName.last(path)) were trimmed away before they could be shown …"
                    if !writeOut((useColour ? "\u{1B}[2m" + note + "\u{1B}[0m" : note) + "\n") { return ExitCode.ok }
                }
                for l in new {
                    any = true
                    if !emit(l, path) { return ExitCode.ok }  // stdout closed
                }
            }
            if !any { usleep(50_000) }
        }
        return ExitCode.ok
    }

    /// One line for display, or nil when a filter drops it.
    static func render(_ raw: [UInt8], level: LogLevel?, grep: String?, regex: Regex<AnyRegexOutput>?, colour: Bool) -> String? {
        let text = String(decoding: raw, as: UTF8.self)
        if let g = grep, !text.contains(g) { return nil }
        if let r = regex, text.firstMatch(of: r) == nil { return nil }
        guard let line = LogLineFormat.parse(Substring(text)) else { return text }
        if let min = level, line.level < min { return nil }
        let name = line.level.name.uppercased().paddedOrCut(toLength: 8)
        var out = line.timestamp + " " + (colour ? LogColour.ansi(line.level) + name + "\u{1B}[0m" : name) + line.message
        if !line.attributes.isEmpty { out += " " + line.attributes }
        out += colour ? " \u{1B}[2m(\(line.file):\(line.line))\u{1B}[0m" : " (\(line.file):\(line.line))"
        return out
    }

    /// False when stdout is gone (EPIPE).
    static func writeOut(_ s: String) -> Bool {
        Array(s.utf8).withUnsafeBytes { writeAll(1, $0, abandonOnInterrupt: { stop != 0 }) }
    }
}

func consoleStopHandler(_ signal: Int32) { ConsoleCommand.stop = 1 }
