// What an app tells Faultline at start.
import Foundation

/// Configuration for `Faultline.start`. Every field has a working default except the DSN; without
/// a DSN, crashes are still captured to disk and converted on the next launch, just not sent.
public struct Options: Sendable {
    /// `http(s)://PUBLIC_KEY@host[:port][/path]/PROJECT`. Missing or malformed: nothing is sent.
    public var dsn: String?
    public var release: String?
    public var environment: String?
    /// The service or program name, sent as a tag.
    public var service: String?
    /// An identifier of the app (e.g. reverse-DNS); the server can allowlist it per key.
    public var appID: String?
    /// Where the SDK keeps its state (crash reports, outbox, install id). Default:
    /// `$XDG_STATE_HOME/faultline/<executable name>` or `~/.local/state/faultline/<executable name>`.
    public var dataDirectory: String?
    /// Install the native crash handler (signals). On by default.
    public var captureCrashes: Bool = true
    /// Log lines at or above this level are sent as log items (all levels become breadcrumbs).
    public var sendLogsAtOrAbove: LogLevel = .warning
    /// The outbox's byte cap; beyond it the oldest envelopes are dropped (and counted).
    public var queueByteCap: Int = 1_000_000
    /// Flush the outbox and end the session when the process exits normally or gets SIGTERM.
    public var flushAtExit: Bool = true
    /// Tee the process's stderr (fd 2: C and Swift writes alike) into a capped file while it still
    /// reaches the original stderr, and keep its last `stderrTailBytes` for crash reports. Off by
    /// default: it puts a pipe and a thread between the program and its stderr.
    public var captureStderr: Bool = false
    /// Where captured stderr goes (capped at 2 MiB like the file log). Default: `<data directory>/stderr.log`.
    public var stderrFile: String?
    /// How much of the end of stderr a crash report carries (fixed at the first start).
    public var stderrTailBytes: Int = 16 * 1024
    /// The share of traces started in this process that are recorded and sent (0…1). A trace
    /// continued from an inbound `traceparent` keeps the caller's decision (its sampled flag).
    /// Unsampled spans still get ids and propagate; they are just not sent.
    public var tracesSampleRate: Double = 1.0
    /// A directory where Swift's runtime backtracer writes JSON crash logs (the program runs with
    /// `SWIFT_BACKTRACE=enable=yes,format=json,output-to=DIR`; DIR must exist). At start, every
    /// `*.json` crash log there becomes one crash event and is then deleted; a log that cannot be
    /// read is moved to `<data directory>/crashes/corrupt`. Nil (the default): not looked at.
    public var swiftBacktraceDirectory: String?

    /// A `RollingFileLogger`'s folder: its `.log.gz` archives (also those of earlier runs) are
    /// uploaded from the SDK's thread and deleted once the server has them. Needs a DSN.
    public var logArchiveDirectory: String?
    /// While the server has log upload switched off, how often to ask whether it is on again.
    public var logArchiveRecheckSeconds: Double = 300

    public init(
        dsn: String? = nil, release: String? = nil, environment: String? = nil,
        service: String? = nil, appID: String? = nil, dataDirectory: String? = nil
    ) {
        self.dsn = dsn
        self.release = release
        self.environment = environment
        self.service = service
        self.appID = appID
        self.dataDirectory = dataDirectory
    }

    /// Absolute: a relative path names the directory it meant at start, not wherever the app
    /// has moved to (chdir) when a crash or the background half uses it.
    var resolvedDataDirectory: String {
        let path = chosenDataDirectory
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return cwd == "/" ? "/" + path : cwd + "/" + path
    }

    private var chosenDataDirectory: String {
        if let d = dataDirectory, !d.isEmpty { return d }
        // getenv, not ProcessInfo's environment dictionary (which copies every variable, on the app's thread at start).
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        let base =
            env("XDG_STATE_HOME").flatMap { $0.isEmpty ? nil : $0 }
            ?? (env("HOME").map { $0 + "/.local/state" } ?? NSTemporaryDirectory())
        let exe = CommandLine.arguments.first.flatMap { $0.split(separator: "/").last.map(String.init) } ?? "app"
        return base + "/faultline/" + exe
    }
}
