// `faultline issues`: list, show, resolve and ignore issues from a terminal, on a server's data
// directory (or its PostgreSQL database) — what the issue-update API does, without curl.
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol

enum IssuesCommand {
    static let usage = """
        usage: faultline issues [--data-dir DIR | --database URL] list [--project SLUG] [--status STATUS] [--limit N]
               faultline issues [--data-dir DIR | --database URL] show ISSUE-ID
               faultline issues [--data-dir DIR | --database URL] resolve ISSUE-ID... [--in-release VERSION | --in-next-release]
               faultline issues [--data-dir DIR | --database URL] reopen ISSUE-ID...
               faultline issues [--data-dir DIR | --database URL] ignore ISSUE-ID... [--for-events N | --for-minutes M]

        STATUS is unresolved (default), resolved, ignored or all. A resolved issue that occurs again in
        a release not older than its fix reopens as a regression; an ignored one comes back after N more
        events or M minutes. Exit codes: 0 done, 2 usage, 3 unknown project or issue.
        """

    static func run(_ args: [String]) -> Int32 {
        var dataDir = ServerConfiguration.defaultDataDirectory()
        var database = DatabaseOption.fromEnvironment
        var project = "default"
        var statusFilter = "unresolved"
        var limit = 100
        var details = IssueStatusDetails()
        var positional: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--data-dir": guard let v = it.next() else { return usageError() }; dataDir = v
            case "--database": guard let v = it.next(), PostgresURL.isPostgres(v) else { return usageError() }; database = v
            case "--project": guard let v = it.next() else { return usageError() }; project = v
            case "--status": guard let v = it.next(), v == "all" || IssueStatus(sentry: v) != nil else { return usageError() }; statusFilter = v
            case "--limit": guard let v = it.next().flatMap(Int.init), v > 0 else { return usageError() }; limit = v
            case "--in-release":
                guard let v = it.next(), ReleaseName.isValid(v) || v == ReleaseName.latest else { return usageError() }
                details.inRelease = v
            case "--in-next-release": details.inNextRelease = true
            case "--for-events": guard let v = it.next().flatMap(Int64.init), v > 0 else { return usageError() }; details.ignoreCount = v
            case "--for-minutes":
                guard let v = it.next().flatMap(Double.init), let until = IssueStatusDetails.ignoreUntil(minutes: v, now: Date().timeIntervalSince1970)
                else { return usageError() }
                details.ignoreUntil = until
            default:
                if a.hasPrefix("-") { return usageError() }
                positional.append(a)
            }
        }
        guard let verb = positional.first else { return usageError() }
        // Options of another verb are refused, not dropped: `resolve --for-events 3` means nothing.
        let resolving = details.inRelease != nil || details.inNextRelease
        let ignoring = details.ignoreCount != nil || details.ignoreUntil != nil
        if (resolving && verb != "resolve") || (ignoring && verb != "ignore") || (resolving && ignoring) { return usageError() }
        if let refused = DatabaseOption.refuseWithoutData("issues", dataDirectory: dataDir, database: database) { return refused }
        do {
            let (store, _, lifecycle) = try DatabaseOption.openWithFeatures(dataDirectory: dataDir, database: database)
            defer { store.close() }
            switch verb {
            case "list":
                guard let p = try store.project(idOrSlug: project) else {
                    printError("issues: no project '\(project)'")
                    return ExitCode.inputError
                }
                for issue in try store.issues(projectID: p.id, limit: 10_000, offset: 0) {
                    let state = try lifecycle.state(issueID: issue.id)
                    guard statusFilter == "all" || IssueStatus(sentry: statusFilter) == state.status else { continue }
                    limit -= 1
                    if limit < 0 { break }
                    print(
                        "\(issue.id)\t\(Lifecycle.shortID(projectSlug: p.slug, issueID: issue.id))\t\(state.status.rawValue)\t\(issue.count)\t\(Self.printable(issue.title))"
                    )
                }
            case "show":
                guard positional.count == 2, let id = Int64(positional[1]) else { return usageError() }
                guard let issue = try store.issue(id: id), let p = try store.project(idOrSlug: String(issue.projectID)) else {
                    printError("issues: no issue \(positional[1])")
                    return ExitCode.inputError
                }
                let state = try lifecycle.state(issueID: issue.id)
                print("\(Lifecycle.shortID(projectSlug: p.slug, issueID: issue.id))  \(Self.printable(issue.title))")
                print("culprit:   \(Self.printable(issue.culprit))")
                print("status:    \(state.status.rawValue)\(state.details.json.objectValue?.isEmpty == false ? " " + state.details.json.jsonString : "")")
                print("events:    \(issue.count)  first \(SentryTimestamp.rfc3339(issue.firstSeen))  last \(SentryTimestamp.rfc3339(issue.lastSeen))")
                print("releases:  \(issue.releases.map(Self.printable).joined(separator: ", "))")
                if state.regressions > 0 { print("regressed: \(state.regressions) time(s)") }
            case "resolve", "reopen", "ignore":
                let ids = positional.dropFirst().compactMap { Int64($0) }
                guard !ids.isEmpty, ids.count == positional.count - 1 else { return usageError() }
                for id in ids where try store.issue(id: id) == nil {
                    printError("issues: no issue \(id)")
                    return ExitCode.inputError
                }
                let status: IssueStatus = verb == "resolve" ? .resolved : verb == "ignore" ? .ignored : .unresolved
                try lifecycle.update(issueIDs: ids, status: status, details: details)
                print("\(status.rawValue): \(ids.map(String.init).joined(separator: " "))")
            default:
                return usageError()
            }
            return ExitCode.ok
        } catch {
            printError("issues: \(error)")
            return ExitCode.failure
        }
    }

    /// Titles come from clients: control characters are shown, never sent to the terminal.
    static func printable(_ s: String) -> String {
        String(
            String.UnicodeScalarView(
                s.unicodeScalars.flatMap { u -> [Unicode.Scalar] in
                    u.properties.generalCategory == .control || u.properties.generalCategory == .format
                        ? Array("\\u{\(String(u.value, radix: 16))}".unicodeScalars) : [u]
                }))
    }

    static func usageError() -> Int32 {
        printError(usage)
        return ExitCode.usage
    }
}
