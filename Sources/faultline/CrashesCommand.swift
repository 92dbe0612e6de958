// `faultline crashes DIR`: turn a directory of crash reports (from the SDK or LD_PRELOAD) into
// crash events, printed as JSON or queued as envelopes.
import FaultlineCrashPickup
import FaultlineProtocol
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineFiles

enum CrashesCommand {
    static let help = """
        usage: faultline crashes DIR [--outbox OUTBOX] [--remove] [--pretty]
               faultline crashes DIR --send DSN [--timeout SECONDS]

        Reads every *.crash.json in DIR (oldest first), and every other *.json there as a Swift
        runtime crash log (SWIFT_BACKTRACE=enable=yes,format=json,output-to=DIR), and prints one
        Sentry crash event per line (JSON). With --outbox, writes each event as an envelope into
        OUTBOX instead (the SDK's queue format; a DSN-configured app started with that data
        directory sends them). With --remove, deletes each report once its event is written. A
        corrupt or truncated report, or a *.json that is neither, is reported on stderr and skipped.
        With --send, sends each event to the server the DSN names instead and removes each report
        the server accepted (`faultline crashes DIR --send DSN --help` for the details).

        exit codes: 0 all converted, 3 DIR unreadable, 4 some reports were corrupt
        """

    static func run(_ args: [String]) -> Int32 {
        // Sending needs an HTTP client, which only faultline-server links.
        if args.contains("--send") { return ServerExecutable.replaceProcess(command: "crashes --send", arguments: args) }
        var dir: String?, outboxDir: String?, remove = false, pretty = false
        var i = 0
        while i < args.count {
            switch args[i] {
            case "-h", "--help": print(help); return ExitCode.ok
            case "--outbox": i += 1; guard i < args.count else { printError("--outbox needs a directory"); return ExitCode.usage }; outboxDir = args[i]
            case "--remove": remove = true
            case "--pretty": pretty = true
            default:
                if args[i].hasPrefix("-") || dir != nil { printError("unexpected argument '\(args[i])'\n\(help)"); return ExitCode.usage }
                dir = args[i]
            }
            i += 1
        }
        guard let dir else { printError("which directory?\n\(help)"); return ExitCode.usage }
        guard (try? FileManager.default.contentsOfDirectory(atPath: dir)) != nil else {
            printError("cannot read directory \(dir)")
            return ExitCode.inputError
        }
        let outbox: Outbox?
        do { outbox = try outboxDir.map { try Outbox(directory: $0) } } catch {
            printError("cannot use outbox \(outboxDir!): \(error)")
            return ExitCode.inputError
        }
        // *.crash.json: Faultline's reports; any other *.json: a Swift backtracer crash log.
        var pickup = CrashFilePickup(corrupt: .report { path, error in printError("\(path): \(error)") })
        pickup.removeDelivered = remove
        var failure: String?
        let result = pickup.run(directory: dir) { crash in
            if let outbox {
                let env = Envelope(header: ["event_id": .string(crash.eventID)], items: [Envelope.Item(type: "event", payload: crash.event.serialized())])
                guard outbox.enqueue(env) else { failure = "could not write to the outbox"; return false }
            } else {
                // Never delete a report whose event did not reach the output.
                guard writeAll(1, Array(crash.event.serialized(pretty: pretty) + Data("\n".utf8))) else { failure = standardOutputError(); return false }
            }
            return true
        }
        if let failure {
            printError(failure)
            return ExitCode.failure
        }
        let corrupt = result.setAside.count
        return corrupt > 0 ? ExitCode.partial : ExitCode.ok
    }
}
