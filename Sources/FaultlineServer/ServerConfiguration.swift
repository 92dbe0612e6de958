// What `faultline serve` is told: data directory, address, limits, and the seams to replace
// (store, symbolicator).
import Foundation
import FaultlineProtocol

public struct ServerConfiguration: Sendable {
    public var dataDirectory: String
    public var host = "127.0.0.1"
    public var port: UInt16 = 8411
    /// HTTP threads: 0 = one per connection (the default), N = a pool of N.
    public var threads: UInt32 = 0
    public var limits = IngestLimits()
    /// Log archive caps and retention (LogArchives/, docs/SERVER.md).
    public var logArchives = LogArchiveLimits()
    /// Connection limits (all clients, per address), trusted proxies, idle timeout, header deadline,
    /// body-progress rule and body budget (docs/SERVER.md "Limits").
    public var http = HTTPServer.Options()
    public var durability: SQLiteStore.Durability = .full
    /// The URL clients reach this server at (e.g. `https://errors.example.com` behind a TLS proxy);
    /// used for the chunk-upload URL and every link an alert or the API gives. Nil: `http://`
    /// plus the request's Host header. Kept without trailing slashes (what people type often has
    /// one), so `base + "/ui/…"` never makes `//ui`, which the web session's cookie path misses.
    public var publicURL: String? {
        didSet {
            guard let url = publicURL, url.hasSuffix("/") else { return }
            publicURL = String(url.reversed().drop { $0 == "/" }.reversed())
        }
    }
    /// Builds the symbolicator for a data directory; nil uses the libdw one over `<data>/debug`.
    public var makeSymbolicator: (@Sendable (_ debugRoot: String, _ indexDirectory: String) -> FrameSymbolicating)?
    /// A PostgreSQL URL (`postgres://…`): the store is PostgresStore on that database, which several
    /// servers can share; nil: SQLite in the data directory. `makeStore` takes precedence.
    public var databaseURL: String?
    /// A debug-file directory shared by several servers (`--debug-files`, a network filesystem
    /// mount); nil: `<data>/debug`, this server's own.
    public var debugFilesDirectory: String?
    /// The stores; nil: `databaseURL`, else SQLite in the data directory (`faultline.sqlite`, with `durability`).
    public var makeStore: (@Sendable (_ dataDirectory: String) throws -> Stores)?

    /// Age and size limits for events and items (Retention/); none by default.
    public var retention = RetentionLimits()
    /// Stacks a backfill regroups per transaction; also how often it saves the point another node
    /// resumes from if this one dies (`--backfill-batch`).
    public var backfillBatchSize = 200
    /// How long a read (event JSON, issue stack, issue page) waits for addresses not looked up
    /// yet, whose module index may still have to be built; past it the frames are answered as
    /// pending and a later read gets them (`--read-symbolication-ms`; 0: never wait).
    public var readSymbolicationBudget: TimeInterval = 0.25
    /// Background threads that do those lookups (one build-id always on the same thread).
    public var readSymbolicationThreads = 2
    /// Transactions and spans older than this many days are deleted (hourly); 0 keeps them.
    public var traceRetentionDays: Double = 30
    /// Upstream debuginfod servers for build-ids with frames and no debug file (empty: none).
    public var debuginfodUpstreams: [String] = []
    /// How long an upstream's "not found" (or no answer) stands before it is asked again.
    public var debuginfodRetryInterval: TimeInterval = 3600
    /// Seconds without progress before an upstream is given up.
    public var debuginfodTimeout: Int = 10
    /// What clients can make the server fetch from upstreams (a frame may name any build-id):
    /// queries and bytes per hour, and the largest file taken (UpstreamFetcher.Options).
    public var debuginfodQueriesPerHour = 240
    public var debuginfodBytesPerHour: Int64 = 4 << 30
    public var debuginfodMaxFileBytes: Int64 = 1 << 30
    /// How alerts go out: the SMTP relay, digests, rate limits (Alerts/).
    public var alerts = AlertConfiguration()

    public init(dataDirectory: String) { self.dataDirectory = dataDirectory }

    /// `$FAULTLINE_DATA_DIR`, else `$XDG_DATA_HOME/faultline`, else `~/.local/share/faultline`, else `./faultline-data`.
    public static func defaultDataDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let d = environment["FAULTLINE_DATA_DIR"], !d.isEmpty { return d }
        if let x = environment["XDG_DATA_HOME"], !x.isEmpty { return x + "/faultline" }
        if let h = environment["HOME"], !h.isEmpty { return h + "/.local/share/faultline" }
        return "./faultline-data"
    }
}
