// The server as one object: opens the data directory, wires store, workers and HTTP, and stops
// them in an order that never loses acknowledged data (HTTP first, then workers, then the store).
import Foundation
import FaultlineProtocol

/// What the first start created, to print once.
public struct Bootstrap: Sendable {
    public var project: ProjectRecord
    public var publicKey: PublicKey
    public var serverToken: String
}

public final class Server: @unchecked Sendable {
    public let config: ServerConfiguration
    /// The core store and the feature stores, built once here and handed to each part.
    public let stores: Stores
    public var store: any Store { stores.core }
    public let debugFiles: DebugFileStore
    public let processor: EventProcessor
    public let backfiller: Backfiller
    public let traceRetention: TraceRetention
    /// Deletes events and items past `config.retention` in the background (idle when unset).
    public let retention: Retention
    public let symbolicator: FrameSymbolicating
    /// Read requests' lookups, off the HTTP threads within `config.readSymbolicationBudget`.
    public let reads: ReadSymbolication
    /// Fetches missing debug files from `config.debuginfodUpstreams` (nil when there are none).
    public let upstream: UpstreamFetcher?
    let http: HTTPServer
    public let refusals: Refusals
    let chunks: ChunkUpload
    /// Joins uploaded chunks into debug files on its own threads (DebugFiles/Assemble.swift).
    let assembler: Assembler
    let web: WebUI?
    /// Nil with a store that does not keep log archives (SQLite and PostgreSQL both do).
    public let logArchives: LogArchives?
    /// Issue statuses, regressions and releases (Lifecycle/); nil with a store that does not speak SQL.
    public let lifecycle: Lifecycle?
    /// Alert rules, their evaluation and delivery (Alerts/); nil with a store that does not speak SQL.
    public let alerts: Alerts?
    public private(set) var bootstrap: Bootstrap?

    public var port: UInt16 { http.port }
    public var baseURL: String { "http://\(config.host):\(port)" }

    public init(config: ServerConfiguration) throws {
        self.config = config
        let dir = config.dataDirectory
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        chmod(dir, 0o700)
        // The feature stores share the core store's database.
        let stores: Stores
        if let make = config.makeStore {
            stores = try make(dir)
        } else if let url = config.databaseURL {
            // One connection per HTTP thread, plus the grouping, backfill, assembly and alert workers.
            stores = Stores(
                sql: try PostgresStore(url: url, connections: Int(config.threads == 0 ? 16 : config.threads) + 6, durability: config.durability))
        } else {
            stores = Stores(sql: try SQLiteStore(path: dir + "/faultline.sqlite", durability: config.durability))
        }
        self.stores = stores
        let store = stores.core
        debugFiles = try DebugFileStore(dataDirectory: dir, sharedDirectory: config.debugFilesDirectory)
        debugFiles.load(try stores.debugFiles.debugFiles())
        let indexDir = dir + "/index"
        try FileManager.default.createDirectory(atPath: indexDir, withIntermediateDirectories: true)
        let base = config.makeSymbolicator?(debugFiles.root, indexDir) ?? DefaultSymbolicator.make(debugRoot: debugFiles.root, indexDirectory: indexDir)
        let files = debugFiles
        var upstreamOptions = UpstreamFetcher.Options(urls: config.debuginfodUpstreams)
        upstreamOptions.retryInterval = config.debuginfodRetryInterval
        upstreamOptions.timeoutSeconds = config.debuginfodTimeout
        upstreamOptions.queriesPerWindow = config.debuginfodQueriesPerHour
        upstreamOptions.bytesPerWindow = config.debuginfodBytesPerHour
        upstreamOptions.maxFileBytes = config.debuginfodMaxFileBytes
        let upstream =
            config.debuginfodUpstreams.isEmpty
            ? nil
            : UpstreamFetcher(options: upstreamOptions, dataDirectory: dir, records: stores.debugFiles, debugFiles: debugFiles)
        self.upstream = upstream
        let caching = CachingSymbolicator(
            base,
            isKnown: { id in
                if files.hasSymbols(for: id) { return true }
                upstream?.want(id)
                return false
            })
        symbolicator = caching
        reads = ReadSymbolication(symbolicator: caching, budget: config.readSymbolicationBudget, threads: config.readSymbolicationThreads)
        processor = EventProcessor(store: store, symbolicator: symbolicator)
        // Minidumps (Minidumps/): walked at ingest, and again by the backfill when a file arrives.
        let walker = DebugFileMinidumpWalker(debugFiles: debugFiles, upstream: upstream)
        backfiller = Backfiller(
            stores: stores, symbolicator: symbolicator,
            rewalk: stores.database.map { MinidumpRewalk(database: $0, store: store, walker: walker) }, batchSize: config.backfillBatchSize)
        let refusals = Refusals()
        self.refusals = refusals
        let ingest = IngestHandler(
            stores: stores, limits: config.limits, processor: processor, refusals: refusals, minidumps: MinidumpIngest(walker: walker, limits: config.limits))
        let chunks = try ChunkUpload(dataDirectory: dir, sharedDirectory: config.debugFilesDirectory.map { $0 + "/.chunks" })
        self.chunks = chunks
        // Leftovers of a previous run: staging files of assemblies it did not finish, partial
        // chunk writes, and chunks no assembly has asked for within the expiry.
        debugFiles.removeStagingFiles()
        chunks.expire()
        let backfiller = self.backfiller
        let debugFileStore = debugFiles
        let sources = try SourceFiles(dataDirectory: dir, records: stores.debugFiles, chunks: chunks)
        let assembler = Assembler(stores: stores, chunks: chunks, debugFiles: debugFiles, sources: sources) { summary in
            // An executable's CFI changes how stored minidumps walk, even without symbols.
            if summary.hasDebugInfo || summary.hasSymbols || summary.isExecutable { backfiller.enqueue(summary.buildID) }
            // A dwz supplementary file arriving after the files that need it: their DWARF is
            // readable only now.
            for dependent in debugFileStore.dependents(ofSupplementary: summary.buildID) { backfiller.enqueue(dependent) }
        }
        self.assembler = assembler
        upstream?.onNewDebugFile = { summary in backfiller.enqueue(summary.buildID) }
        let processor = self.processor
        let httpBox = WeakHTTPServer()
        let router = Router(
            stores: stores, ingest: ingest, chunks: chunks, assembler: assembler,
            read: ReadAPI(stores: stores, reads: reads), debuginfod: Debuginfod(files: debugFiles, sources: sources),
            status: DebugFileStatus(records: stores.debugFiles, jobs: stores.backfills, files: debugFiles, backfiller: backfiller), sources: sources,
            limits: config.limits, refusals: refusals, publicURL: config.publicURL,
            health: { [httpBox] in
                [
                    "status": .string(ServerHealth.status(refusals: refusals)), "grouping_queue": .int(Int64(processor.pending)),
                    "backfill_running": .bool(backfiller.isBusy),
                    "refused": .object(refusals.totals.mapValues { .int($0) }),
                    "header_deadline_disconnects": .int(Int64(clamping: httpBox.server?.headerDeadlineDisconnects ?? 0)),
                    "body_progress_disconnects": .int(Int64(clamping: httpBox.server?.bodyProgressDisconnects ?? 0)),
                    "per_ip_refusals": .int(Int64(clamping: httpBox.server?.perIPRefusals ?? 0)),
                    "body_budget_refusals": [
                        "server": .int(httpBox.server?.bodyBudgetRefusals.server ?? 0),
                        "address": .int(httpBox.server?.bodyBudgetRefusals.address ?? 0)
                    ],
                    "forwarded_client_refusals": .int(httpBox.server?.forwardedClientRefusals ?? 0)
                ]
            })
        // The pages query in SQL (WebQueries over SQLDatabase: both stores); stores from
        // `makeStore` without a database serve the JSON API and ingest without them.
        let database = stores.database
        if let database {
            web = try WebUI(
                stores: stores, database: database, reads: reads, debugFiles: debugFiles, backfiller: backfiller, sourceFiles: sources,
                publicURL: config.publicURL)
        } else {
            web = nil
        }
        router.web = web
        logArchives = try stores.logArchives.map {
            try LogArchives(store: store, archives: $0, dataDirectory: dir, limits: config.logArchives, volume: ingest.volume, refusals: refusals)
        }
        router.logArchives = logArchives
        lifecycle = database.map { Lifecycle(store: store, database: $0) }
        alerts = database.map {
            Alerts(store: store, issueReads: stores.issueReads, database: $0, configuration: config.alerts, symbolicator: caching, publicURL: config.publicURL)
        }
        router.lifecycle = lifecycle
        router.alerts = alerts
        router.read.lifecycle = lifecycle
        router.read.publicURL = config.publicURL
        http = HTTPServer(handler: router)
        traceRetention = TraceRetention(traces: stores.traces, days: config.traceRetentionDays)
        retention = Retention(stores: stores, limits: config.retention, installWindowSeconds: Double(config.limits.installWindowSeconds))
        httpBox.server = http
        if try store.projects().isEmpty {
            do {
                bootstrap = try Self.createDefaults(stores.projects)
            } catch  where (try? store.projects().isEmpty) == false {
                // Another server on the same database created the defaults first: theirs stand.
            }
        }
    }

    static func createDefaults(_ store: any ProjectAdministrationStore) throws -> Bootstrap {
        let project = try store.createProject(slug: "default", name: "Default")
        let key = try store.createPublicKey(projectID: project.id, allowedAppIDs: [])
        let token = try store.createServerToken(name: "default")
        return Bootstrap(project: project, publicKey: key.key, serverToken: token)
    }

    /// Starts workers (which first group whatever was acknowledged but not grouped) and HTTP.
    public func start() throws {
        processor.start()
        backfiller.start()
        reads.start()
        assembler.start()
        traceRetention.start()
        retention.start()
        upstream?.start()
        web?.start()
        alerts?.start()
        var o = config.http
        o.host = config.host
        o.port = config.port
        o.threads = config.threads
        do {
            try http.start(o)
        } catch {
            // The workers hold the server unowned: they must be stopped (their threads joined)
            // before the caller drops the server, or a worker reads a destroyed object.
            stopWorkers()
            throw error
        }
    }

    /// The DSN for a public key of a project, as clients should embed it: at the public URL
    /// (`--public-url`) when there is one, else at the address the server listens on.
    public func dsn(key: PublicKey, project: ProjectRecord) -> String {
        DSN.text(serverURL: config.publicURL ?? "http://\(config.host):\(port)", publicKey: key, projectID: String(project.id))
    }

    /// Stops HTTP (in-flight requests finish and are committed), drains grouping, closes the store.
    public func stop() {
        http.stop()
        stopWorkers()
        if PhaseClock.enabled { FileHandle.standardError.write(Data(PhaseClock.report().utf8)) }
    }

    /// Everything `start` starts besides HTTP, then the store.
    private func stopWorkers() {
        traceRetention.stop()
        retention.stop()
        alerts?.stop()
        web?.stop()
        upstream?.stop()
        assembler.stop()
        backfiller.stop()
        reads.stop()
        processor.stop()
        stores.close()
    }
}

/// Lets /health read the HTTP layer's counters without a reference cycle.
final class WeakHTTPServer: @unchecked Sendable { weak var server: HTTPServer? }
