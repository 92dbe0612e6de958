// `faultline logs`: stored log archives on a server's data directory — the most frequent line
// patterns, the list, and the remote upload switch.
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol

enum LogsCommand {
    static let usage = """
        usage: faultline logs top [--project P] [--release R] [--since T] [--level L] [-n 50] [--json]
               faultline logs list [--project P] [--install ID] [--release R] [--since T] [-n 100] [--json]
               faultline logs switch show|on|off|clear --project P [--release R | --install ID]
               (every form takes --data-dir DIR; default $FAULTLINE_DATA_DIR or ~/.local/share/faultline;
                with PostgreSQL also --database URL, env FAULTLINE_DATABASE_URL, as given to 'serve')

        top     counts log lines across stored archives by level and pattern: numbers, hex
                addresses, UUIDs and quoted strings are normalised (docs/SERVER.md, "Line patterns"),
                so 'order 17 failed' and 'order 42 failed' count as one. Streams through gzip; shows
                progress on a terminal. --since takes seconds since 1970, ISO 8601, or an age (2h, 7d);
                --level keeps lines at or above it (\(LogLevel.fileLogNames.joined(separator: " ")); WARN, FATAL).
        list    the archives stored, newest first.
        switch  turns log upload off or on for a project, one release or one install (the most
                specific rule wins; 'clear' removes a rule). SDKs learn it from their next upload or
                check (X-Faultline-Log-Upload) and keep archives while it is off.

        Counting uses a fixed number of counters (8192 per thread) and lines cut at 4 KiB; when
        there are more distinct patterns than counters, a second pass counts the candidates exactly:
        every count shown is exact (docs/SERVER.md, "Line patterns"). -n is at most 1000.
        Text from uploads is printed with control and bidi characters escaped (\\u{1b}, \\u{202e});
        --json escapes them as JSON does (\\u001b, \\u202e), the value is unchanged.
        Works on the data directory directly, also while the server runs.
        exit codes: 0 ok, 1 failure, 2 usage error, 3 no server data or no such project
        """

    static func run(_ args: [String]) -> Int32 {
        var dataDir = ServerConfiguration.defaultDataDirectory()
        var database = DatabaseOption.fromEnvironment
        var project = "default", release: String?, install: String?, since: String?, level: String?
        var n: Int?, json = false
        var positional: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--data-dir": guard let v = it.next() else { return usageError() }; dataDir = v
            case "--database": guard let v = it.next(), PostgresURL.isPostgres(v) else { return usageError() }; database = v
            case "--project": guard let v = it.next() else { return usageError() }; project = v
            case "--release": guard let v = it.next() else { return usageError() }; release = v
            case "--install": guard let v = it.next() else { return usageError() }; install = v
            case "--since": guard let v = it.next() else { return usageError() }; since = v
            case "--level": guard let v = it.next() else { return usageError() }; level = v
            case "-n": guard let v = it.next(), let k = Int(v), k > 0 else { return usageError() }; n = k
            case "--json": json = true
            default:
                if a.hasPrefix("-") { return usageError() }
                positional.append(a)
            }
        }
        guard let verb = positional.first else { return usageError() }
        if let refused = DatabaseOption.refuseWithoutData("logs", dataDirectory: dataDir, database: database) { return refused }
        var sinceTime: Double?
        if let since {
            guard let t = LogArchives.parseTime(since) else {
                printError("logs: --since: give seconds since 1970, ISO 8601, or an age like 2h or 7d"); return ExitCode.usage
            }
            sinceTime = t
        }
        if let level, LogLineTop.levelRank(level) == nil {
            printError("logs: --level: one of \(LogLevel.fileLogNames.joined(separator: " ")) (or WARN, FATAL)"); return ExitCode.usage
        }
        do {
            let stores = try DatabaseOption.open(dataDirectory: dataDir, database: database)
            defer { stores.close() }
            guard let p = try stores.core.project(idOrSlug: project) else { printError("logs: no project '\(shown(project))'"); return ExitCode.inputError }
            guard let kept = stores.logArchives else { printError("logs: this store keeps no log archives"); return ExitCode.inputError }
            let archives = try LogArchives.reader(store: stores.core, archives: kept, dataDirectory: dataDir)
            switch verb {
            case "top":
                var q = LogTopQuery()
                q.projectID = p.id; q.release = release; q.since = sinceTime; q.minimumLevel = level; q.limit = n ?? 50
                let tty = isatty(2) == 1
                let started = Date()
                var progress: (@Sendable (Int, Int, Int) -> Void)?
                if tty {
                    progress = { (pass: Int, done: Int, total: Int) -> Void in
                        let text = (pass == 1 ? "\rscanning archives: " : "\r\u{1b}[Kcounting candidates exactly: ") + String(done) + "/" + String(total)
                        FileHandle.standardError.write(Data(text.utf8))
                    }
                }
                let result = try archives.top(q, progress: progress)
                if tty && result.archives > 0 { FileHandle.standardError.write(Data("\r\u{1b}[K".utf8)) }
                if json { printJSON(LogArchives.topJSON(result)); return ExitCode.ok }
                printTop(result, seconds: Date().timeIntervalSince(started))
            case "list":
                var f = LogArchiveFilter(projectID: p.id, installID: install, release: release, since: sinceTime)
                f.limit = n ?? 100
                let list = try archives.list(f)
                if json { printJSON(JSONValue.array(list.map(LogArchives.json))); return ExitCode.ok }
                print("ID\tRECEIVED\tINSTALL\tRELEASE\tLINES\tBYTES(gz)\tNAME")
                for a in list {
                    print(
                        "\(a.id)\t\(LogLineTop.iso(a.received).prefix(19))\t\(shown(String(a.installID.prefix(12))))\t\(shown(a.release ?? "-"))\t\(a.lines)\t\(a.compressedBytes)\t\(shown(a.clientName))"
                    )
                }
            case "switch":
                guard positional.count == 2 else { return usageError() }
                let scope: LogUploadRule.Scope = install != nil ? .install : (release != nil ? .release : .project)
                let value = install ?? release ?? ""
                if install != nil && release != nil { printError("logs: give --release or --install, not both"); return ExitCode.usage }
                switch positional[1] {
                case "on", "off": try archives.setRule(LogUploadRule(projectID: p.id, scope: scope, value: value, enabled: positional[1] == "on"))
                case "clear": try archives.clearRule(projectID: p.id, scope: scope, value: value)
                case "show": break
                default: return usageError()
                }
                let rules = try archives.rules(projectID: p.id)
                if json { printJSON(LogArchives.rulesJSON(rules, projectID: p.id)); return ExitCode.ok }
                if rules.isEmpty { print("log upload is on for project '\(shown(p.slug))' (no rules)") }
                for r in rules {
                    let what = r.scope == .project ? "project '\(shown(p.slug))'" : "\(r.scope.rawValue) \(shown(r.value))"
                    print("log upload \(r.enabled ? "on" : "off") for \(what)")
                }
            default:
                return usageError()
            }
            return ExitCode.ok
        } catch {
            printError("logs: " + shown("\(error)"))
            return ExitCode.failure
        }
    }

    static func printTop(_ r: LogTopResult, seconds: Double) {
        let mb = Double(r.uncompressedBytes) / 1e6
        print(
            String(
                format: "%d archives, %lld lines, %.1f MB of log in %.2f s (%.0f MB/s)%@", r.archives, r.lines, mb, seconds,
                seconds > 0 ? mb / seconds : 0, r.unreadable > 0 ? ", \(r.unreadable) unreadable archive(s) skipped" : ""))
        if r.truncatedLines > 0 { print("\(r.truncatedLines) line(s) longer than \(LogLineTop.maxLineBytes) bytes counted by their start (patterns end in …)") }
        if r.sketchOverflowed { print("more distinct patterns than counters: counted again exactly for the candidates") }
        if r.unlistedAtMost > 0 { print("every pattern not listed occurs at most \(r.unlistedAtMost) time(s)") }
        print("  COUNT  LEVEL     FIRST SEEN                LAST SEEN                 PATTERN")
        for p in r.patterns {
            let count = String(p.count)
            print(
                String(repeating: " ", count: max(0, 7 - count.count)) + count + "  " + shown(p.level).padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                    + shown(p.firstSeen).padding(toLength: 24, withPad: " ", startingAt: 0) + "  "
                    + shown(p.lastSeen).padding(toLength: 24, withPad: " ", startingAt: 0)
                    + "  " + shown(p.pattern))
            print("         e.g. " + shown(p.example))
        }
    }

    // Every piece of stored text `logs` prints goes through `shown` or `printJSON` (TerminalText):
    // log lines, names and releases come from anyone with a public key.
    static func shown(_ s: String) -> String { TerminalText.visible(s) }

    static func printJSON(_ v: JSONValue) { print(TerminalText.visibleJSON(String(decoding: v.serialized(), as: UTF8.self))) }

    static func usageError() -> Int32 {
        printError(usage)
        return ExitCode.usage
    }
}
