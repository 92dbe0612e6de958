// `faultline crashes DIR --send DSN`: deliver a directory of crash reports (a `faultline coredump`
// spool, an app's crash directory) straight to a server, for machines where no app with the SDK
// will start again to pick them up. Runs here, not in `faultline`, because it needs an HTTP client
// (`faultline` links none: FaultlineCommandLine/Subcommand.swift). The same pickup pass as the SDK
// and `faultline crashes` (CrashFilePickup): a report is removed only once the server took its
// event, so a run that fails part-way is simply run again.
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import FaultlineCommandLine
import FaultlineCrashPickup
import FaultlineProtocol

enum SendCrashesCommand {
    static let help = """
        usage: faultline crashes DIR --send DSN [--timeout SECONDS]

        Reads every crash report in DIR (as `faultline crashes DIR` does) and sends each as an
        event to the server the DSN names, removing a report once the server accepted it. A
        report the server refuses as malformed (400) or too large (413) is kept and named on
        stderr; when the server cannot be reached, is busy (429, 5xx) or answers otherwise, the
        run stops and keeps every report not yet sent, for the next run (a systemd timer, say).

        exit codes: 0 every report sent, 1 stopped (server unreachable or busy), 2 usage,
                    3 DIR unreadable, 4 some reports corrupt or refused
        """

    static func run(_ args: [String]) -> Int32 {
        var dir: String?, dsnText: String?, timeout: TimeInterval = 30
        var i = 0
        while i < args.count {
            switch args[i] {
            case "-h", "--help": print(help); return ExitCode.ok
            case "--send":
                i += 1
                guard i < args.count else { printError("--send needs a DSN"); return ExitCode.usage }
                dsnText = args[i]
            case "--timeout":
                i += 1
                guard i < args.count, let t = TimeInterval(args[i]), t > 0 else { printError("--timeout needs a number of seconds"); return ExitCode.usage }
                timeout = t
            default:
                if args[i].hasPrefix("-") || dir != nil { printError("unexpected argument '\(args[i])'\n\(help)"); return ExitCode.usage }
                dir = args[i]
            }
            i += 1
        }
        guard let dir, let dsnText else { printError("which directory and DSN?\n\(help)"); return ExitCode.usage }
        let dsn: DSN
        do { dsn = try DSN(parsing: dsnText) } catch {
            printError("--send: \(error)")
            return ExitCode.usage
        }
        guard (try? FileManager.default.contentsOfDirectory(atPath: dir)) != nil else {
            printError("cannot read directory \(dir)")
            return ExitCode.inputError
        }
        let sender = EventSender(dsn: dsn, timeout: timeout)
        var pickup = CrashFilePickup(corrupt: .report { path, error in printError("\(path): \(error)") })
        pickup.removeDelivered = true
        var stopped: String?
        var refused = 0, sent = 0
        _ = pickup.run(directory: dir) { crash in
            guard stopped == nil else { return false }
            let envelope = Envelope(header: ["event_id": .string(crash.eventID)], items: [Envelope.Item(type: "event", payload: crash.event.serialized())])
            switch sender.send(envelope) {
            case .accepted:
                sent += 1
                return true
            case .refused(let why):
                refused += 1
                printError("\(crash.eventID): the server refused it (\(why)); the report is kept")
                return false
            case .stop(let why):
                stopped = why
                return false
            }
        }
        print("sent \(sent) crash event(s) to \(dsn.envelopeURL.absoluteString)")
        if let stopped {
            printError("stopped: \(stopped); the reports not sent are kept for the next run")
            return ExitCode.failure
        }
        return refused > 0 ? ExitCode.partial : ExitCode.ok
    }
}

/// One envelope POSTed to a DSN's envelope endpoint, synchronously, with the DSN's key.
private struct EventSender {
    enum Outcome {
        case accepted
        /// This event will never be taken as it is (400, 413): keep it, go on with the others.
        case refused(String)
        /// Nothing will be taken now (unreachable, 401/403, 429, 5xx): keep everything, stop.
        case stop(String)
    }

    let dsn: DSN
    let session: URLSession

    init(dsn: DSN, timeout: TimeInterval) {
        self.dsn = dsn
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        session = URLSession(configuration: configuration)
    }

    func send(_ envelope: Envelope) -> Outcome {
        var request = URLRequest(url: dsn.envelopeURL)
        request.httpMethod = "POST"
        request.setValue("application/x-sentry-envelope", forHTTPHeaderField: "Content-Type")
        request.setValue(dsn.authHeader(client: "faultline-crashes/\(FaultlineVersion.string)"), forHTTPHeaderField: HeaderName.sentryAuth)
        request.httpBody = envelope.serialized()
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome = Outcome.stop("no answer")
        session.dataTask(with: request) { body, response, error in
            defer { done.signal() }
            if let error {
                outcome = .stop("\(dsn.envelopeURL.absoluteString): \(error.localizedDescription)")
                return
            }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let text = String(decoding: (body ?? Data()).prefix(300), as: UTF8.self)
            switch status {
            case 200..<300: outcome = .accepted
            case 400, 413: outcome = .refused("\(status) \(text)")
            default: outcome = .stop("the server answered \(status) \(text)")
            }
        }.resume()
        done.wait()
        return outcome
    }
}
