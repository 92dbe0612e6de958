// `faultline projects`: list and create projects, public keys and server tokens in a data directory.
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol

enum ProjectsCommand {
    static let usage = """
        usage: faultline projects [--data-dir DIR] [--url URL] list
               faultline projects [--data-dir DIR] [--url URL] create NAME [--app-id ID]…
               faultline projects [--data-dir DIR] [--url URL] keys PROJECT [--create] [--app-id ID]…
               faultline projects [--data-dir DIR] key revoke KEY
               faultline projects [--data-dir DIR] token create NAME
               faultline projects [--data-dir DIR] token list
               faultline projects [--data-dir DIR] token revoke NAME-OR-PREFIX
               faultline projects [--data-dir DIR] user add NAME     (password: first line of stdin)
               faultline projects [--data-dir DIR] user list
               faultline projects [--data-dir DIR] grouping PROJECT [1|2|3|4]
               faultline projects [--data-dir DIR] frame-variables PROJECT [on|off]
               faultline projects [--data-dir DIR] ip-addresses PROJECT [on|off]

        Works on the data directory directly (also while the server runs); with --database URL (env
        FAULTLINE_DATABASE_URL) instead of --data-dir, on the PostgreSQL database that
        `faultline serve --database URL` uses. --url is the server's address used to print DSNs (default http://127.0.0.1:8411). Public keys are 32 hex digits;
        server tokens start with 'flst_' and must never be embedded in an app. `key revoke` and
        `token revoke` delete a key or the tokens of that name (or value prefix, as `token list`
        shows it): the server that shares the data refuses them within 30 s.
        `grouping` shows or sets which grouping rules the project's new events follow: 1 groups a
        non-native frame (Python, JavaScript) by its function, 2 by its module and function, 3 as 2
        with a browser script (a frame whose file is a URL) by its name without host, query and
        content hash and a Rust legacy name without its hash, so a deploy does not split issues,
        4 as 3 with a message's stack on its current thread, a stackless exception by type and
        value, and an anonymous frame by its file and line of code (new projects get 4; projects
        keep the rules they were created with). Existing issues keep their events; a running server
        applies a change within 30 s.
        `frame-variables` shows or sets whether the project's events keep their frames' local
        variables (`vars`, which SDKs such as sentry-python send by default and which can hold
        secrets): off unless turned on, and then ingest drops them before anything is stored.
        `ip-addresses` shows or sets whether the project keeps the address an event came from when
        the event asks for it (`user.ip_address: "{{auto}}"`, browser and mobile SDKs): on unless
        turned off (Sentry's "Prevent Storing of IP Addresses"); when off, the placeholder is not
        shown and no address is kept. A running server applies a change within 30 s.
        """

    static func run(_ args: [String]) -> Int32 {
        var dataDir = ServerConfiguration.defaultDataDirectory()
        var url = ProcessInfo.processInfo.environment["FAULTLINE_URL"] ?? "http://127.0.0.1:8411"
        var database = DatabaseOption.fromEnvironment
        var appIDs: [String] = []
        var create = false
        var positional: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--data-dir": guard let v = it.next() else { return usageError() }; dataDir = v
            case "--url": guard let v = it.next() else { return usageError() }; url = v
            case "--database": guard let v = it.next(), PostgresURL.isPostgres(v) else { return usageError() }; database = v
            case "--app-id": guard let v = it.next() else { return usageError() }; appIDs.append(v)
            case "--create": create = true
            default:
                if a.hasPrefix("-") { return usageError() }
                positional.append(a)
            }
        }
        guard let verb = positional.first else { return usageError() }
        if verb != "create", let refused = DatabaseOption.refuseWithoutData("projects", dataDirectory: dataDir, database: database) { return refused }
        do {
            let stores = try DatabaseOption.open(dataDirectory: dataDir, database: database)
            defer { stores.close() }
            let (store, projects) = (stores.core, stores.projects)
            let admin = ProjectAdministration(store: projects)
            func dsn(_ key: PublicKey, _ p: ProjectRecord) -> String { ProjectAdministration.dsn(key: key, project: p, serverURL: url) }
            switch verb {
            case "list":
                for p in try store.projects() {
                    print("\(p.id)\t\(p.slug)\t\(p.name)\tgrouping \(p.groupingConfig.rawValue)")
                }
            case "create":
                guard positional.count == 2 else { return usageError() }
                let (p, k) = try admin.createProject(named: positional[1], allowedAppIDs: appIDs)
                print("created project '\(p.slug)' (id \(p.id))\nDSN: \(dsn(k.key, p))")
            case "keys":
                guard positional.count == 2, let p = try store.project(idOrSlug: positional[1]) else {
                    printError("projects: no such project"); return ExitCode.inputError
                }
                if create { _ = try projects.createPublicKey(projectID: p.id, allowedAppIDs: appIDs) }
                for k in try projects.publicKeys(projectID: p.id) {
                    let apps = k.allowedAppIDs.isEmpty ? "any app" : k.allowedAppIDs.joined(separator: ",")
                    print("\(k.key.value)\t\(apps)\t\(dsn(k.key, p))")
                }
            case "grouping":
                guard (2...3).contains(positional.count), let p = try store.project(idOrSlug: positional[1]) else {
                    if positional.count >= 2 { printError("projects: no such project") }
                    return positional.count >= 2 ? ExitCode.inputError : usageError()
                }
                if positional.count == 3 {
                    guard let n = Int(positional[2]), let config = GroupingConfig(rawValue: n) else { return usageError() }
                    try projects.setGroupingConfig(projectID: p.id, config)
                    print("project '\(p.slug)' groups new events by rules \(config)")
                } else {
                    print("project '\(p.slug)' groups new events by rules \(p.groupingConfig)")
                }
            case "frame-variables":
                return try onOffSetting(
                    positional, store: store, current: \.keepsFrameVariables,
                    set: { try projects.setKeepsFrameVariables(projectID: $0, $1) },
                    says: { "project '\($0)' \($1 ? "keeps" : "drops") its events' frame variables" }) ?? ExitCode.ok
            case "ip-addresses":
                return try onOffSetting(
                    positional, store: store, current: \.storesIPAddresses,
                    set: { try projects.setStoresIPAddresses(projectID: $0, $1) },
                    says: {
                        "project '\($0)' \($1 ? "keeps" : "does not keep") the address an event came from when the event asks for it ({{auto}})"
                    }) ?? ExitCode.ok
            case "key":
                guard positional.count == 3, positional[1] == "revoke" else { return usageError() }
                guard try projects.revokePublicKey(positional[2]) else {
                    printError("projects: no public key \(positional[2])"); return ExitCode.inputError
                }
                print("revoked public key \(positional[2]); a running server refuses it within \(Int(CredentialLifetime.seconds)) s")
            case "token":
                switch (positional.count, positional.count > 1 ? positional[1] : "") {
                case (3, "create"): print(try projects.createServerToken(name: positional[2]))
                case (2, "list"):
                    for t in try projects.serverTokens() { print("\(t.prefix)…\t\(t.name)\t\(SentryTimestamp.rfc3339(t.created))") }
                case (3, "revoke"):
                    let n = try projects.revokeServerTokens(nameOrPrefix: positional[2])
                    guard n > 0 else { printError("projects: no server token named or starting \(positional[2])"); return ExitCode.inputError }
                    print("revoked \(n) server token(s); a running server refuses them within \(Int(CredentialLifetime.seconds)) s")
                default: return usageError()
                }
            case "user":
                // Web page logins (see docs/SERVER.md, "Web pages").
                if positional.count == 2, positional[1] == "list" {
                    for u in try WebUsers.list(stores: stores) { print(u) }
                } else if positional.count == 3, positional[1] == "add" {
                    guard let password = readLine(strippingNewline: true) else { printError("projects: give the password on stdin"); return ExitCode.usage }
                    try WebUsers.set(stores: stores, name: positional[2], password: password)
                    print("user '\(positional[2])' can log in to the web pages")
                } else {
                    return usageError()
                }
            default:
                return usageError()
            }
            return ExitCode.ok
        } catch {
            printError("projects: \(error)")
            return ExitCode.failure
        }
    }

    /// A project's on/off setting: `VERB PROJECT` shows it, `VERB PROJECT on|off` sets it. Nil when
    /// it went as asked, else the exit code.
    static func onOffSetting(
        _ positional: [String], store: any Store, current: KeyPath<ProjectRecord, Bool>, set: (Int64, Bool) throws -> Void,
        says: (String, Bool) -> String
    ) throws -> Int32? {
        guard (2...3).contains(positional.count), let p = try store.project(idOrSlug: positional[1]) else {
            if positional.count >= 2 { printError("projects: no such project") }
            return positional.count >= 2 ? ExitCode.inputError : usageError()
        }
        var on = p[keyPath: current]
        if positional.count == 3 {
            guard ["on", "off"].contains(positional[2]) else { return usageError() }
            on = positional[2] == "on"
            try set(p.id, on)
        }
        print(says(p.slug, on))
        return nil
    }

    static func usageError() -> Int32 {
        printError(usage)
        return ExitCode.usage
    }
}
