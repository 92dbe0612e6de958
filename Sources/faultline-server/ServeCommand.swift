// `faultline serve`: runs the server until SIGTERM/SIGINT (then stops without losing acknowledged data).
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol

enum ServeCommand {
    static let usage = """
        usage: faultline serve [--data-dir DIR] [--host ADDR] [--port N] [--threads N]
                               [--install-cap N] [--durability full|normal] [--database URL]
                               [--debug-files DIR] [--public-url URL] [--max-connections-per-ip N]
                               [--trusted-proxy ADDR[/BITS]...] [--min-body-rate BYTES_PER_S]
                               [--body-memory N[K|M|G]] [--body-memory-per-ip N[K|M|G]]
                               [--debuginfod-upstream URL...] [--debuginfod-retry SECONDS]
                               [--debuginfod-timeout SECONDS] [--debuginfod-budget QUERIES,BYTES]
                               [--debuginfod-max-file-size N] [--retention-days D] [--retention-max-bytes N]
                               [--retention-interval SECONDS] [--backfill-batch N] [--read-symbolication-ms MS]
                               [--smtp smtp://HOST:PORT] [--smtp-from ADDRESS] [--smtp-require-tls]
                               [--alert-digest-seconds S] [--alerts-per-minute N]

        Runs ingest (Sentry envelopes), grouping, debug-file upload (sentry-cli protocol), automatic
        backfill, the JSON API and debuginfod on one port. On first start it creates the project
        'default' and prints its DSN and a server token.

          --data-dir DIR      data directory (env FAULTLINE_DATA_DIR; default $XDG_DATA_HOME/faultline)
          --host ADDR         IPv4 address to listen on (env FAULTLINE_HOST; default 127.0.0.1)
          --port N            port, 0 for any free one (env FAULTLINE_PORT; default 8411)
          --threads N         HTTP worker pool of N threads (default: a thread per connection)
          --install-cap N     events one install may send per hour (other items 100x, a sender
                              that names no install 10x), 0 = no cap (default 1000)
          --durability MODE   full: fsync every commit (default); normal: survive process crashes only
          --database URL      PostgreSQL instead of SQLite, e.g. postgres://faultline@db:5432/faultline
                              (env FAULTLINE_DATABASE_URL); several servers may share one database
                              (docs/SERVER.md "Several servers on PostgreSQL"). --store is the same option.
          --debug-files DIR   debug files in DIR instead of <data>/debug: a directory several servers
                              share (network filesystem; env FAULTLINE_DEBUG_FILES)
          --public-url URL    how clients reach this server, e.g. behind a TLS proxy (env FAULTLINE_PUBLIC_URL);
                              used in the chunk-upload URL it hands out
          --debuginfod-upstream URL...
                              debuginfod servers (repeatable, or several URLs in one space-separated
                              value; env FAULTLINE_DEBUGINFOD_UPSTREAM, else elfutils' DEBUGINFOD_URLS)
                              asked in the background for the
                              debug file of a build-id that has frames and no file here; a file found is
                              stored and backfilled as if uploaded
          --debuginfod-retry SECONDS
                              how long an upstream's "not found" or failure stands (default 3600)
          --debuginfod-timeout SECONDS
                              seconds without progress before an upstream is given up (default 10)
          --debuginfod-budget QUERIES,BYTES
                              at most this many upstream queries and bytes downloaded per hour, e.g.
                              240,4G (the default); past either, build-ids wait for the next hour
          --debuginfod-max-file-size N
                              take no upstream file larger than N bytes (512M, 2G; default 1G)
          --retention-days D  delete events and items received more than D days ago (fractions
                              allowed; env FAULTLINE_RETENTION_DAYS; default 0: keep them)
          --retention-max-bytes N[K|M|G]
                              delete the oldest events and items while their stored bytes exceed N
                              (env FAULTLINE_RETENTION_MAX_BYTES; default 0: no cap)
          --retention-interval SECONDS
                              seconds between two retention sweeps (default 600)
          --max-connections-per-ip N
                              connections at once from one address, and requests in flight per client
                              a trusted proxy names (default 16; 0: no limit)
          --trusted-proxy ADDR[/BITS]
                              a load balancer or proxy (IPv4 address or network; repeatable) whose
                              X-Forwarded-For (else Forwarded: for=) names the client: its own
                              connections are not capped per address, its clients are
          --min-body-rate BYTES_PER_S
                              after the headers, each 10 s must bring this much body per second or
                              the connection is closed (default 1024; 0: no rule)
          --body-memory N[K|M|G]
                              request bodies (over 64 KiB each) buffered at once, all clients; more
                              get 503 + Retry-After before their body is read (default 192M; 0: no cap)
          --body-memory-per-ip N[K|M|G]
                              the same per client address, answered 429 (default 64M; keep it at
                              least 33M, the largest body a route takes)
          --backfill-batch N  stacks a backfill regroups per transaction, and how often it saves the
                              point another server resumes from if this one dies (default 200)
          --read-symbolication-ms MS
                              how long a read (event JSON, issue stack, issue page) waits for frames
                              whose module index is still being built off the HTTP threads; past it
                              they are answered as pending (default 250; 0: never wait)
          --smtp URL          the SMTP relay email alerts go through: smtp://HOST:PORT (STARTTLS when
                              offered) or smtps://HOST:PORT (env FAULTLINE_SMTP_URL); credentials from
                              FAULTLINE_SMTP_USER and FAULTLINE_SMTP_PASSWORD
          --smtp-from ADDR    the sender of alert mails (env FAULTLINE_SMTP_FROM; default faultline@localhost)
          --smtp-require-tls  never send without TLS
          --alert-digest-seconds S
                              after an alert about an issue, its further events wait S seconds and go
                              out as one digest (default 600)
          --alerts-per-minute N
                              at most N alerts per rule per minute; more wait, none is dropped (default 30)
        Alert rules: faultline alerts --help. Issue statuses and releases: the API (docs/SERVER.md).
        """

    static func run(_ args: [String]) -> Int32 {
        let env = ProcessInfo.processInfo.environment
        var config = ServerConfiguration(dataDirectory: ServerConfiguration.defaultDataDirectory())
        if let h = env["FAULTLINE_HOST"], !h.isEmpty { config.host = h }
        var smtpURL: String?
        do {
            if let p = try EnvironmentSetting(name: "FAULTLINE_PORT", flag: "--port").value(in: env, { UInt16($0) }) { config.port = p }
            let days = EnvironmentSetting(name: "FAULTLINE_RETENTION_DAYS", flag: "--retention-days")
            if let d = try days.value(in: env, { Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } }) { config.retention.maxAgeDays = d }
            let bytes = EnvironmentSetting(name: "FAULTLINE_RETENTION_MAX_BYTES", flag: "--retention-max-bytes")
            if let b = try bytes.value(in: env, byteCount) { config.retention.maxTotalBytes = b }
            let smtp = EnvironmentSetting(name: "FAULTLINE_SMTP_URL", flag: "--smtp")
            smtpURL = try smtp.value(in: env) { $0.hasPrefix("smtp://") || $0.hasPrefix("smtps://") ? $0 : nil }
        } catch {
            printError("serve: \(error)")
            return ExitCode.usage
        }
        if let u = env["FAULTLINE_PUBLIC_URL"], !u.isEmpty { config.publicURL = u }
        if let u = env["FAULTLINE_DEBUGINFOD_UPSTREAM"] { config.debuginfodUpstreams = u.split(separator: " ").map(String.init) }
        if let d = env["FAULTLINE_DATABASE_URL"], !d.isEmpty { config.databaseURL = d }
        if let d = env["FAULTLINE_DEBUG_FILES"], !d.isEmpty { config.debugFilesDirectory = d }
        var smtpFrom = env["FAULTLINE_SMTP_FROM"].flatMap { $0.isEmpty ? nil : $0 } ?? "faultline@localhost"
        var smtpRequireTLS = false
        var it = args.makeIterator()
        while let a = it.next() {
            func value() -> String? { it.next() }
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--data-dir": guard let v = value() else { return missing(a) }; config.dataDirectory = v
            case "--host": guard let v = value() else { return missing(a) }; config.host = v
            case "--public-url": guard let v = value(), v.hasPrefix("http://") || v.hasPrefix("https://") else { return missing(a) }; config.publicURL = v
            case "--port": guard let v = value().flatMap({ UInt16($0) }) else { return missing(a) }; config.port = v
            case "--threads": guard let v = value().flatMap({ UInt32($0) }) else { return missing(a) }; config.threads = v
            case "--install-cap": guard let v = value().flatMap({ Int($0) }), v >= 0 else { return missing(a) }; config.limits.eventsPerInstall = v
            case "--debuginfod-upstream":
                guard let v = value(), v.hasPrefix("http://") || v.hasPrefix("https://") || v.hasPrefix("file://") else { return missing(a) }
                config.debuginfodUpstreams += v.split(separator: " ").map(String.init)
            case "--debuginfod-retry": guard let v = value().flatMap({ Double($0) }), v >= 0 else { return missing(a) }; config.debuginfodRetryInterval = v
            case "--debuginfod-timeout": guard let v = value().flatMap({ Int($0) }), v > 0 else { return missing(a) }; config.debuginfodTimeout = v
            case "--debuginfod-budget":
                let parts = value()?.split(separator: ",").map(String.init) ?? []
                guard parts.count == 2, let q = Int(parts[0]), q > 0, let b = byteCount(parts[1]), b > 0 else { return missing(a) }
                (config.debuginfodQueriesPerHour, config.debuginfodBytesPerHour) = (q, b)
            case "--debuginfod-max-file-size":
                guard let v = value().flatMap({ byteCount($0) }), v > 0 else { return missing(a) }; config.debuginfodMaxFileBytes = v
            case "--database", "--store":
                guard let v = value(), PostgresURL.isPostgres(v) else { return missing(a) }
                config.databaseURL = v
            case "--retention-days":
                guard let v = value().flatMap({ Double($0) }), v >= 0, v.isFinite else { return missing(a) }; config.retention.maxAgeDays = v
            case "--retention-max-bytes": guard let v = value().flatMap(byteCount) else { return missing(a) }; config.retention.maxTotalBytes = v
            case "--retention-interval":
                guard let v = value().flatMap({ Double($0) }), v > 0, v.isFinite else { return missing(a) }; config.retention.interval = v
            case "--max-connections-per-ip": guard let v = value().flatMap({ UInt32($0) }) else { return missing(a) }; config.http.perIPConnectionLimit = v
            case "--trusted-proxy":
                guard let v = value().flatMap(TrustedProxies.network(parsing:)) else { return missing(a) }
                config.http.trustedProxies.add(v)
            case "--min-body-rate": guard let v = value().flatMap({ UInt32($0) }) else { return missing(a) }; config.http.minBodyBytesPerSecond = v
            case "--body-memory": guard let v = value().flatMap(byteCount) else { return missing(a) }; config.http.bodyBufferBytes = Int(v)
            case "--body-memory-per-ip": guard let v = value().flatMap(byteCount) else { return missing(a) }; config.http.bodyBufferBytesPerAddress = Int(v)
            case "--backfill-batch": guard let v = value().flatMap({ Int($0) }), v > 0 else { return missing(a) }; config.backfillBatchSize = v
            case "--read-symbolication-ms":
                guard let v = value().flatMap({ Double($0) }), v >= 0, v.isFinite else { return missing(a) }
                config.readSymbolicationBudget = v / 1000
            case "--debug-files": guard let v = value(), !v.isEmpty else { return missing(a) }; config.debugFilesDirectory = v
            case "--smtp":
                guard let v = value(), v.hasPrefix("smtp://") || v.hasPrefix("smtps://") else { return missing(a) }
                smtpURL = v
            case "--smtp-from": guard let v = value(), v.contains("@") else { return missing(a) }; smtpFrom = v
            case "--smtp-require-tls": smtpRequireTLS = true
            case "--alert-digest-seconds":
                guard let v = value().flatMap({ Double($0) }), v > 0, v.isFinite else { return missing(a) }; config.alerts.digestInterval = v
            case "--alerts-per-minute": guard let v = value().flatMap({ Int64($0) }), v > 0 else { return missing(a) }; config.alerts.perRulePerMinute = v
            case "--durability":
                guard let v = value().flatMap(SQLiteStore.Durability.init(rawValue:)) else { return missing(a) }
                config.durability = v
            default:
                printError("serve: unknown option '\(a)'\n\(usage)")
                return ExitCode.usage
            }
        }
        // elfutils' variable, as `faultline symbolicate` reads it, when no upstream was named.
        if config.debuginfodUpstreams.isEmpty, let urls = env["DEBUGINFOD_URLS"] {
            config.debuginfodUpstreams = urls.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                .filter { $0.hasPrefix("http://") || $0.hasPrefix("https://") || $0.hasPrefix("file://") }
        }
        if let url = smtpURL {
            config.alerts.smtp = SMTPSettings(
                url: url, from: smtpFrom, username: env["FAULTLINE_SMTP_USER"].flatMap { $0.isEmpty ? nil : $0 },
                password: env["FAULTLINE_SMTP_PASSWORD"], requireTLS: smtpRequireTLS)
        }
        // The old load-balancer advice: every client then has the balancer's address, so each
        // per-address limit (and the install window of events that name no install) is shared.
        if config.http.perIPConnectionLimit == 0 && config.http.trustedProxies.networks.isEmpty {
            printError(
                "serve: warning: --max-connections-per-ip 0 without --trusted-proxy: behind a load balancer every client shares its address's limits; name the balancer with --trusted-proxy ADDR[/BITS] instead (docs/DEPLOY.md)"
            )
        }
        HeapTrimThreshold.apply()
        let shutdown = ShutdownSignal.install()
        // SQLite's files are one server's; PostgreSQL nodes share their database by design.
        var directoryLock: DataDirectoryLock?
        if config.databaseURL == nil {
            do {
                try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
                directoryLock = try DataDirectoryLock(dataDirectory: config.dataDirectory)
            } catch {
                printError("serve: \(error)")
                return ExitCode.failure
            }
        }
        defer { withExtendedLifetime(directoryLock) {} }
        let server: Server
        do {
            server = try Server(config: config)
        } catch {
            printError("serve: \(error)")
            return ExitCode.failure
        }
        do {
            try server.start()
        } catch {
            // A fresh data directory has its defaults by now, and the token is stored only hashed:
            // shown now or never (the next start creates none).
            if let b = server.bootstrap { print(createdWithoutListening(b, config: config).joined(separator: "\n")) }
            printError("serve: \(error)")
            return ExitCode.failure
        }
        let database = config.databaseURL.map { ", database: " + PostgresURL.redacted($0) } ?? ""
        var lines = ["faultline server listening on \(server.baseURL) (data: \(config.dataDirectory)\(database))"]
        if !config.debuginfodUpstreams.isEmpty { lines.append("debuginfod upstreams: \(config.debuginfodUpstreams.joined(separator: " "))") }
        if let b = server.bootstrap {
            lines.append("created project '\(b.project.slug)' (id \(b.project.id))")
            lines.append("DSN: \(server.dsn(key: b.publicKey, project: b.project))")
            lines.append("server token (shown once; for uploads and reading): \(b.serverToken)")
        }
        print(lines.joined(separator: "\n"))
        fflush(nil)
        shutdown.wait()
        print("faultline server stopping")
        fflush(nil)
        server.stop()
        return ExitCode.ok
    }

    /// What a first start created, when it could not listen: the DSN's address is not known yet,
    /// so the key is shown with the command that prints its DSN.
    static func createdWithoutListening(_ b: Bootstrap, config: ServerConfiguration) -> [String] {
        let place = config.databaseURL == nil ? "--data-dir \(config.dataDirectory)" : "--database URL"
        return [
            "created project '\(b.project.slug)' (id \(b.project.id)), but could not listen",
            "public key: \(b.publicKey.value) (its DSN: faultline projects \(place) keys \(b.project.slug))",
            "server token (shown once; for uploads and reading): \(b.serverToken)"
        ]
    }

    /// "1048576", "512K", "100M", "2G" (powers of 1024); nil when malformed or negative.
    static func byteCount(_ s: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        guard let last = s.uppercased().last else { return nil }
        let (digits, unit) = units[last].map { (String(s.dropLast()), $0) } ?? (s, 1)
        guard let n = Int64(digits), n >= 0 else { return nil }
        let (v, overflow) = n.multipliedReportingOverflow(by: unit)
        return overflow ? nil : v
    }

    static func missing(_ option: String) -> Int32 {
        printError("serve: \(option) needs a valid value")
        return ExitCode.usage
    }
}
