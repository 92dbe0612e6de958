// `faultline-server`: the server-side `faultline` commands (they link the server, its stores and
// the upload client). Normally started by `faultline <command>`, which replaces itself with this
// executable; run directly it takes the same arguments.
import Foundation
import FaultlineCommandLine

let commands: [Subcommand] =
    ServerSideCommands.summaries.map { command in
        let run: @Sendable ([String]) -> Int32
        switch command.key {
        case "serve": run = ServeCommand.run
        case "upload": run = UploadCommand.run
        case "debug-files": run = DebugFilesCommand.run
        case "logs": run = LogsCommand.run
        case "projects": run = ProjectsCommand.run
        case "alerts": run = AlertsCommand.run
        case "issues": run = IssuesCommand.run
        default: fatalError("ServerSideCommands lists '\(command.key)', which faultline-server does not implement")
        }
        return Subcommand(name: command.key, summary: command.value, run: run)
    }
    // `faultline crashes DIR --send DSN` arrives here (the rest of `crashes` runs in `faultline`).
    + [Subcommand(name: "crashes", summary: "send a directory of crash reports to a server (DSN)", run: SendCrashesCommand.run)]
exit(CommandDispatch.run(Array(CommandLine.arguments.dropFirst()), commands: commands, help: CommandDispatch.help(commands: commands)))
