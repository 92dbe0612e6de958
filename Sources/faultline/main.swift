// The `faultline` command: a thin front; each subcommand parses arguments and calls a library.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineProtocol

let arguments = Array(CommandLine.arguments.dropFirst())
exit(CommandRouter.run(arguments))
