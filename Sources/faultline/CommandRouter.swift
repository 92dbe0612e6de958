// Subcommand table and the top-level help. Exit codes are documented in docs/CLI.md.
import Foundation
import FaultlineProtocol

/// A subcommand: parses its own arguments and returns the process exit code.
struct Subcommand: Sendable {
    let name: String
    let summary: String
    let run: @Sendable ([String]) -> Int32
}

enum CommandRouter {
    static let subcommands: [Subcommand] = [
        Subcommand(name: "symbolicate", summary: "resolve crash reports, events or addresses to functions and lines", run: SymbolicateCommand.run),
        Subcommand(name: "crashes", summary: "turn a directory of crash reports into crash events", run: CrashesCommand.run),
        Subcommand(name: "serve", summary: "run the ingest, symbolication and debug-file server", run: ServeCommand.run),
        Subcommand(name: "upload", summary: "upload debug files to a server (for CI)", run: UploadCommand.run),
        Subcommand(name: "debug-files", summary: "split debug info off release binaries (and upload it)", run: DebugFilesCommand.run),
        Subcommand(name: "console", summary: "follow file logs and stderr captures live (tail -F, colour, filters)", run: ConsoleCommand.run),
        Subcommand(name: "logs", summary: "stored log archives: most frequent line patterns, list, remote upload switch", run: LogsCommand.run),
        Subcommand(name: "projects", summary: "list and create projects and keys in a server's data directory", run: ProjectsCommand.run),
    ]

    static func run(_ args: [String]) -> Int32 {
        guard let first = args.first else { print(help); return ExitCode.usage }
        switch first {
        case "-h", "--help", "help": print(help); return ExitCode.ok
        case "--version", "version": print("faultline \(FaultlineVersion.string)"); return ExitCode.ok
        default:
            guard let cmd = subcommands.first(where: { $0.name == first }) else {
                printError("unknown command '\(first)'; run 'faultline --help' for the list")
                return ExitCode.usage
            }
            return cmd.run(Array(args.dropFirst()))
        }
    }

    static var help: String {
        var s = """
        faultline \(FaultlineVersion.string) — crash reporting with symbolication for Swift, C and C++ on Linux

        usage: faultline <command> [options]   (faultline <command> --help for details)

        commands:

        """
        for c in subcommands { s += "  " + c.name.padding(toLength: 13, withPad: " ", startingAt: 0) + c.summary + "\n" }
        s += "\nexit codes: 0 ok, 1 failure, 2 usage error, 3 input not found or unreadable, 4 partial result"
        return s
    }
}
