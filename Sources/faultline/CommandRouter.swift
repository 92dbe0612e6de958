// Subcommand table and the top-level help. Exit codes are documented in docs/CLI.md.
// Symbolication, crash pickup and the console run here; the server-side commands run in
// `faultline-server` (why: FaultlineCommandLine/Subcommand.swift).
import FoundationEssentials
import Glibc
import FaultlineCommandLine

enum CommandRouter {
    static let subcommands: [Subcommand] =
        [
            Subcommand(name: "symbolicate", summary: "resolve crash reports, events or addresses to functions and lines", run: SymbolicateCommand.run),
            Subcommand(name: "crashes", summary: "turn a directory of crash reports into crash events", run: CrashesCommand.run),
            Subcommand(name: "coredump", summary: "core_pattern pipe handler: a core on stdin → a crash report in a spool directory", run: CoredumpCommand.run),
            Subcommand(name: "console", summary: "follow file logs and stderr captures live (tail -F, colour, filters)", run: ConsoleCommand.run)
        ]
        + ServerSideCommands.summaries.map { command in
            Subcommand(name: command.key, summary: command.value) { ServerExecutable.replaceProcess(command: command.key, arguments: $0) }
        }

    static func run(_ args: [String]) -> Int32 {
        CommandDispatch.run(args, commands: subcommands, help: CommandDispatch.help(commands: subcommands))
    }
}
