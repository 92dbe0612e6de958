// The subcommand table both executables dispatch through, and the names of the commands that
// run in `faultline-server`.
//
// Why two executables: `faultline symbolicate` is often run once per crash report, and a process
// that links the server (libmicrohttpd, libpq, SQLite, OpenSSL) and the upload client (static
// FoundationNetworking, hence libcurl, GnuTLS, Kerberos, LDAP) spends about as long starting as
// llvm-symbolizer takes to answer one address (README, docs/SYMBOLICATION.md). `faultline` links only what symbolication, crash
// pickup and the console need, and replaces itself (execv, same pid, same arguments) with
// `faultline-server` from its own directory for the commands below; users see one command.
import FoundationEssentials
import Glibc
import FaultlineProtocol

/// A subcommand: parses its own arguments and returns the process exit code.
public struct Subcommand: Sendable {
    public let name: String
    public let summary: String
    public let run: @Sendable ([String]) -> Int32

    public init(name: String, summary: String, run: @escaping @Sendable ([String]) -> Int32) {
        self.name = name
        self.summary = summary
        self.run = run
    }
}

/// The commands `faultline-server` runs, with the summaries `faultline --help` prints for them.
public enum ServerSideCommands {
    public static let executableName = "faultline-server"
    public static let summaries: KeyValuePairs<String, String> = [
        "serve": "run the ingest, symbolication and debug-file server",
        "upload": "upload debug files to a server (for CI)",
        "debug-files": "split debug info off release binaries (and upload it)",
        "logs": "stored log archives: most frequent line patterns, list, remote upload switch",
        "projects": "list and create projects and keys in a server's data directory",
        "alerts": "alert rules (webhook, Slack, email) on new issues, regressions, frequency",
        "issues": "list, show, resolve and ignore issues from a terminal"
    ]
}

/// Help, version and dispatch over a table of subcommands.
public enum CommandDispatch {
    public static func run(_ args: [String], commands: [Subcommand], help: @autoclosure () -> String) -> Int32 {
        guard let first = args.first else { print(help()); return ExitCode.usage }
        switch first {
        case "-h", "--help", "help": print(help()); return ExitCode.ok
        case "--version", "version": print("faultline \(FaultlineVersion.string)"); return ExitCode.ok
        default:
            guard let cmd = commands.first(where: { $0.name == first }) else {
                printError("unknown command '\(first)'; run 'faultline --help' for the list")
                return ExitCode.usage
            }
            return cmd.run(Array(args.dropFirst()))
        }
    }

    public static func help(commands: [Subcommand]) -> String {
        var s = """
            faultline \(FaultlineVersion.string) — crash reporting with symbolication for Swift, C and C++ on Linux

            usage: faultline <command> [options]   (faultline <command> --help for details)

            commands:

            """
        for c in commands { s += "  " + c.name.paddedOrCut(toLength: 13) + c.summary + "\n" }
        s += "\nexit codes: 0 ok, 1 failure, 2 usage error, 3 input not found or unreadable, 4 partial result"
        return s
    }
}
