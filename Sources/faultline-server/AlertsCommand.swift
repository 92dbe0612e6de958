// `faultline alerts`: add, list, remove and test alert rules in a server's data directory (or its
// PostgreSQL database); a running server picks changes up within a second.
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol

enum AlertsCommand {
    static let usage = """
        usage: faultline alerts [--data-dir DIR | --database URL] add --project SLUG
                                (--webhook URL | --slack URL | --email ADDRESS)
                                [--on new-issue,regression,frequency:N/M,crash-free:P/M,symbolicated]
                                [--environment ENV] [--level LEVEL] [--release VERSION]
               faultline alerts [--data-dir DIR | --database URL] list [--project SLUG] [--deliveries]
               faultline alerts [--data-dir DIR | --database URL] remove RULE-ID
               faultline alerts [--data-dir DIR | --database URL] test RULE-ID

        Rules are per project. Triggers (--on, default new-issue,regression):
          new-issue        the first occurrence of an issue
          regression       a resolved issue occurs again in a release not older than its fix (or an
                           ignored issue comes back)
          frequency:N/M    N occurrences of one issue within M minutes
          crash-free:P/M   a release's crash-free sessions below P % over the last M minutes (≥ 10 sessions)
          symbolicated     an issue this rule alerted about unsymbolicated was named by a late debug file
        After an alert about an issue, its further occurrences go out as one digest (serve
        --alert-digest-seconds). Email goes through the relay given to `faultline serve --smtp`.
        `test` queues a test alert; `list --deliveries` shows each delivery with its state and last error.
        Exit codes: 0 done, 1 failed, 2 usage, 3 bad input (unknown project or rule, bad target).
        """

    static func run(_ args: [String]) -> Int32 {
        var dataDir = ServerConfiguration.defaultDataDirectory()
        var database = DatabaseOption.fromEnvironment
        var project: String?
        var channel: (AlertChannel, String)?
        var on = "new-issue,regression"
        var environment: String?, level: String?, release: String?
        var showDeliveries = false
        var positional: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--data-dir": guard let v = it.next() else { return usageError() }; dataDir = v
            case "--database": guard let v = it.next(), PostgresURL.isPostgres(v) else { return usageError() }; database = v
            case "--project": guard let v = it.next() else { return usageError() }; project = v
            case "--webhook": guard let v = it.next() else { return usageError() }; channel = (.webhook, v)
            case "--slack": guard let v = it.next() else { return usageError() }; channel = (.slack, v)
            case "--email": guard let v = it.next() else { return usageError() }; channel = (.email, v)
            case "--on": guard let v = it.next() else { return usageError() }; on = v
            case "--environment": guard let v = it.next() else { return usageError() }; environment = v
            case "--level": guard let v = it.next() else { return usageError() }; level = v
            case "--release": guard let v = it.next() else { return usageError() }; release = v
            case "--deliveries": showDeliveries = true
            default:
                if a.hasPrefix("-") { return usageError() }
                positional.append(a)
            }
        }
        guard let verb = positional.first else { return usageError() }
        if let refused = DatabaseOption.refuseWithoutData("alerts", dataDirectory: dataDir, database: database) { return refused }
        do {
            let (store, admin, _) = try DatabaseOption.openWithFeatures(dataDirectory: dataDir, database: database)
            defer { store.close() }
            func projectRecord(_ slug: String?) throws -> ProjectRecord? {
                guard let slug else { return nil }
                guard let p = try store.project(idOrSlug: slug) else { throw AlertRuleError.badTarget("no project '\(slug)'") }
                return p
            }
            switch verb {
            case "add":
                guard positional.count == 1, let (kind, target) = channel, let p = try projectRecord(project) else { return usageError() }
                let rule = try admin.add(project: p, channel: kind, target: target, on: on, environment: environment, level: level, release: release)
                print("added alert rule \(rule.id): \(rule.channel.rawValue) \(rule.target) on \(rule.triggers.map(\.spelling).joined(separator: ","))")
            case "list":
                let p = try projectRecord(project)
                for r in try admin.rules(project: p) {
                    let filters = [r.environment.map { "environment=\($0)" }, r.level.map { "level=\($0)" }, r.release.map { "release=\($0)" }].compactMap {
                        $0
                    }
                    print(
                        "\(r.id)\tproject \(r.projectID)\t\(r.channel.rawValue)\t\(r.target)\t\(r.triggers.map(\.spelling).joined(separator: ","))\t\(filters.joined(separator: " "))"
                    )
                }
                if showDeliveries {
                    for d in try admin.deliveries(project: p, limit: 200) {
                        print(
                            "delivery \(d.id)\trule \(d.ruleID)\t\(SentryTimestamp.rfc3339(d.created))\t\(d.kind.rawValue)\t\(d.state.rawValue)"
                                + "\tattempts \(d.attempts)\t\(d.headline)\t\(d.lastError ?? "")")
                    }
                }
            case "remove", "test":
                guard positional.count == 2, let id = Int64(positional[1]) else { return usageError() }
                guard try admin.rule(id: id) != nil else {
                    printError("alerts: no alert rule \(id)")
                    return ExitCode.inputError
                }
                if verb == "remove" {
                    _ = try admin.remove(ruleID: id)
                    print("removed alert rule \(id)")
                } else {
                    print("queued test delivery \(try admin.test(ruleID: id)) for rule \(id); a running server sends it within a second")
                }
            default:
                return usageError()
            }
            return ExitCode.ok
        } catch let e as AlertRuleError {
            printError("alerts: \(e)")
            return ExitCode.inputError
        } catch {
            printError("alerts: \(error)")
            return ExitCode.failure
        }
    }

    static func usageError() -> Int32 {
        printError(usage)
        return ExitCode.usage
    }
}
