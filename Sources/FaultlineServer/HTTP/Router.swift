// Maps paths to handlers through one route table (`routes`) and applies its credentials: public
// keys on ingest (checked here before the body, and by IngestHandler for the project), Bearer
// server tokens on everything that uploads or reads, web sessions in WebUI.
import Foundation
import FaultlineProtocol
import FaultlineThreads
import Synchronization

final class Router: HTTPHandling, @unchecked Sendable {
    let store: any Store
    /// The SQL the logs and sessions APIs read through (`WebQueries`); nil: they answer 404.
    let database: (any SQLDatabase)?
    /// Nil: traces are not kept (the trace API answers 404).
    let traces: (any TraceStore)?
    let ingest: IngestHandler
    let chunks: ChunkUpload
    let assembler: Assembler
    let read: ReadAPI
    let debuginfod: Debuginfod
    let status: DebugFileStatus
    let sources: SourceFiles
    let limits: IngestLimits
    let publicURL: String?
    let health: @Sendable () -> JSONValue
    let refusals: Refusals
    /// The web pages under /ui/ (Web/WebUI.swift); set once by Server before start.
    var web: WebUI?
    /// Log archives (LogArchives/); set once by FaultlineServer before start.
    var logArchives: LogArchives?
    /// Issue statuses and releases (Lifecycle/); set once by Server before start (nil: a store
    /// without SQL, whose API answers 404 there).
    var lifecycle: Lifecycle?
    /// Alert rules and deliveries (Alerts/); set once by Server before start.
    var alerts: Alerts?

    init(
        stores: Stores, ingest: IngestHandler, chunks: ChunkUpload, assembler: Assembler, read: ReadAPI, debuginfod: Debuginfod,
        status: DebugFileStatus, sources: SourceFiles, limits: IngestLimits, refusals: Refusals, publicURL: String? = nil,
        health: @escaping @Sendable () -> JSONValue
    ) {
        self.database = stores.database
        self.store = stores.core; self.traces = stores.traces; self.ingest = ingest; self.chunks = chunks; self.assembler = assembler; self.refusals = refusals
        self.read = read; self.debuginfod = debuginfod; self.status = status; self.sources = sources; self.limits = limits; self.health = health
        self.publicURL = publicURL  // without trailing slashes (ServerConfiguration)
    }

    // MARK: The route table

    static let uploadBytes = 4 * 1024 * 1024
    static let notFound = (status: 404, message: "")  // "no such endpoint: <path>"

    /// Every endpoint, first match wins: the JSON API below /api/0/ (server token), Sentry ingest
    /// (public key), debuginfod, health and the web pages (their own sessions; WebUI routes below
    /// /ui/). A new endpoint is one row here; `preflight`, `bodyLimit` and `handle` all read it.
    static let routes: [Route] = [
        Route(nil, "/health", .anyone) { router, _, _ in .json(router.health()) },
        Route(nil, "/", .anyone, refusal: notFound) { router, _, _ in
            router.web == nil ? .detail(404, "no such endpoint: /") : HTTPResponse(status: 303, headers: [("Location", "/ui/")])
        },
        Route(nil, "/ui/**", .webSession, body: .webForm, refusal: notFound) { router, r, _ in
            router.web?.handle(r) ?? .detail(404, "no such endpoint: \(r.path)")
        },
        Route(["GET", "HEAD"], "/buildid/**", .anyone) { router, r, _ in router.debuginfod.handle(r.pathComponents) },

        // Uploads (sentry-cli's chunked upload and assemble, bundled sources)
        Route(["GET", "POST"], "/api/0/organizations/*/chunk-upload", .serverToken, body: .upload(maxBytes: ChunkUpload.maxRequestSize + 1024 * 1024)) {
            router, r, c in
            guard r.method == "GET" else { return router.chunks.receive(r) }
            return .json(router.chunks.options(baseURL: ServerBaseURL.of(r, publicURL: router.publicURL), org: c[0]))
        },
        Route(["POST"], "/api/0/projects/*/*/files/difs/assemble", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard try router.store.project(idOrSlug: c[1]) != nil else { return .detail(404, "no project '\(c[1])'") }
            let response = router.assembler.handle(r)
            router.web?.noteAssemble(r, response)
            return response
        },
        Route(["POST"], "/api/0/debug-files/*/sources", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            try router.sources.handle(r, buildIDHex: c[0])
        },

        // The JSON read API
        Route(["GET"], "/api/0/debug-files/status", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, _ in try router.status.handle(r) },
        Route(["GET"], "/api/0/projects", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, _ in try router.read.projects() },
        // Log archives (LogArchives/): list, download, line patterns, the upload switch.
        Route(["GET", "POST"], "/api/0/projects/*/log-archives|log-upload/**", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, _ in
            guard let logArchives = router.logArchives else { return .detail(404, "no such endpoint: \(r.path)") }
            return try logArchives.api(r, Array(r.pathComponents.dropFirst(2)))
        },
        Route(["GET"], "/api/0/projects/*/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, c in try router.read.project(c[1]) },
        Route(["GET", "PUT"], "/api/0/projects/*/*/issues", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard r.method == "PUT" else { return try router.read.issues(r, project: c[1]) }
            return router.lifecycleAPI?.bulkUpdate(r, project: c[1]) ?? .detail(404, "this store keeps no issue statuses")
        },
        // Releases (Lifecycle/): sentry-cli's `releases new|finalize|list|deploys`, both URL forms.
        Route(["GET", "POST", "PUT"], "/api/0/organizations/*/releases/**", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, _ in
            router.lifecycleAPI?.releases(r, path: Array(r.pathComponents.dropFirst(5)), projectSlug: nil) ?? .detail(404, "this store keeps no releases")
        },
        Route(["GET", "POST", "PUT"], "/api/0/projects/*/*/releases/**", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            router.lifecycleAPI?.releases(r, path: Array(r.pathComponents.dropFirst(6)), projectSlug: c[1]) ?? .detail(404, "this store keeps no releases")
        },
        // Alert rules and their deliveries (Alerts/).
        Route(["GET", "POST"], "/api/0/projects/*/*/alerts/**", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            router.alerts?.api(r, project: c[1], path: Array(r.pathComponents.dropFirst(6))) ?? .detail(404, "this store keeps no alerts")
        },
        // Logs and sessions per release as JSON, in keyset pages (Read/LogsAPI, Lifecycle/ReleaseHealthAPI).
        Route(["GET"], "/api/0/projects/*/*/logs", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard let queries = router.queries else { return .detail(404, "this store keeps no logs") }
            return try LogsAPI(store: router.store, queries: queries).handle(r, project: c[1])
        },
        Route(["GET"], "/api/0/projects/*/*/sessions", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard let queries = router.queries else { return .detail(404, "this store keeps no sessions") }
            return try ReleaseHealthAPI(store: router.store, queries: queries).handle(r, project: c[1])
        },
        // What SDKs reported losing before sending (ClientReports/).
        Route(["GET"], "/api/0/projects/*/*/client-reports", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard let queries = router.queries else { return .detail(404, "this store keeps no client reports") }
            return try ClientReportTally.handle(r, project: c[1], store: router.store, queries: queries)
        },
        // What users wrote about crashes and errors (UserFeedback/).
        Route(["GET"], "/api/0/projects/*/*/user-feedback", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard let database = router.database else { return .detail(404, "this store keeps no user feedback") }
            return try UserFeedbackAPI(reads: UserFeedbackReads(store: router.store, database: database)).list(r, project: c[1])
        },
        // An event's attachments (Attachments/): the list, one described, one downloaded.
        Route(["GET"], "/api/0/projects/*/*/events/*/attachments", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard let a = router.read.attachments else { return .detail(404, "this store keeps no attachments") }
            return try AttachmentAPI(store: router.store, attachments: a).list(org: c[0], project: c[1], eventID: c[2])
        },
        Route(["GET"], "/api/0/projects/*/*/events/*/attachments/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard let a = router.read.attachments else { return .detail(404, "this store keeps no attachments") }
            return try AttachmentAPI(store: router.store, attachments: a).one(r, org: c[0], project: c[1], eventID: c[2], attachmentID: c[3])
        },
        Route(["GET"], "/api/0/projects/*/*/events/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, c in
            try router.read.event(org: c[0], project: c[1], eventID: c[2])
        },
        // Sentry's organization and key reads (Read/OrganizationAPI): sentry-cli's `organizations
        // list` and `projects list`; a project's DSNs.
        Route(["GET"], "/api/0/organizations", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, _ in try router.read.organizations() },
        Route(["GET"], "/api/0/organizations/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, c in try router.read.organization(c[0]) },
        Route(["GET"], "/api/0/organizations/*/projects", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, c in
            try router.read.organizationProjects(c[0])
        },
        Route(["GET"], "/api/0/projects/*/*/keys", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            try router.read.projectKeys(r, project: c[1])
        },
        // Sentry's id lookups (Read/IDLookupAPI): an event id, a short id.
        Route(["GET"], "/api/0/organizations/*/eventids/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, c in
            try router.read.resolveEventID(org: c[0], c[1])
        },
        Route(["GET"], "/api/0/organizations/*/shortids/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, c in
            try router.read.resolveShortID(org: c[0], c[1])
        },
        Route(["GET", "PUT"], "/api/0/issues/*", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            guard r.method == "PUT" else { return try router.read.issue(c[0]) }
            return router.lifecycleAPI?.updateIssue(r, id: c[0]) ?? .detail(404, "this store keeps no issue statuses")
        },
        // Who the token is (`sentry-cli info`).
        Route(["GET"], "/api/0", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, _ in
            router.lifecycleAPI?.identity(r) ?? .json(["user": .null, "auth": ["scopes": []]])
        },
        Route(["GET", "POST"], "/api/0/issues/*/comments", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            router.lifecycleAPI?.comments(r, id: c[0]) ?? .detail(404, "this store keeps no comments")
        },
        Route(["GET"], "/api/0/issues/*/events|occurrences", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, c in
            try router.read.occurrences(r, issue: c[0])
        },
        Route(["GET"], "/api/0/debug-files", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, _, _ in try router.read.debugFiles() },
        Route(["GET"], "/api/0/backfills", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, _ in try router.read.backfills(r) },
        // Traces (Traces/): recent traces per project and one trace as a tree.
        Route(["GET"], "/api/0/projects/*/*/traces/**", .serverToken, body: .upload(maxBytes: uploadBytes)) { router, r, _ in
            let (limit, offset) = router.read.limitOffset(r)
            return try TraceAPI(store: router.store, traces: router.traces).handle(r, Array(r.pathComponents.dropFirst(2)), limit: limit, offset: offset)
                ?? .detail(404, "no such endpoint: \(r.path)")
        },
        // Anything else below /api/0/ still needs the token first, so unknown paths tell nothing.
        Route(["GET"], "/api/0/**", .serverToken, body: .upload(maxBytes: uploadBytes)) { _, r, _ in .detail(404, "no such endpoint: \(r.path)") },

        // Log archives from the SDK (POST) and its switch check (GET), with the project's public key.
        Route(["GET", "POST"], "/api/*/log-archive", .publicKey, body: .logArchive) { router, r, c in
            router.logArchives?.receive(r, projectRef: c[0]) ?? .detail(404, "no such endpoint: \(r.path)")
        },
        // Sentry ingest: /api/<project>/envelope/, /store/ and /minidump/ (Crashpad's and Breakpad's
        // multipart uploads: Minidumps/), under one set of ingest limits.
        Route(["POST"], "/api/*/envelope|store|minidump", .publicKey, body: .ingest, refusal: (405, "ingest takes POST")) { router, r, c in
            router.ingest.handle(r, project: c[0], endpoint: c[1] == "envelope" ? .envelope : c[1] == "store" ? .store : .minidump)
        }
    ]

    var lifecycleAPI: LifecycleAPI? { lifecycle.map(LifecycleAPI.init) }
    var queries: WebQueries? { database.map { WebQueries(store: store, database: $0) } }

    static func route(for path: [String]) -> (route: Route, captures: [String])? {
        for route in routes { if let c = route.pattern.match(path) { return (route, c) } }
        return nil
    }

    /// Where each recent request path went in `routes` (its index and captures; -1: none). Every
    /// request asks four times (body limit, preflight, headers, handling) and an ingest route sits
    /// at the end of the table, past thirty patterns: the walk and the path's split were a few
    /// percent of a connection thread's CPU. The answer depends on the path alone. Each thread
    /// first asks its own few last paths (no lock: one cache shared by every connection thread
    /// made them sleep on its lock when they met), then the shared cache (a new connection's
    /// thread), which is emptied when full, so paths that name ids cannot grow either.
    private static let recentRoutes = Mutex<[String: RouteLookup]>([:])
    private static let threadRoutes = PerThread { ThreadRoutes() }
    static let recentRoutesKept = 1024
    static let recentRoutePathBytes = 256

    struct RouteLookup {
        var index: Int
        var captures: [String]
    }

    /// A thread's last few lookups, newest last.
    final class ThreadRoutes {
        static let kept = 4
        var entries: [(path: String, found: RouteLookup)] = []
        func find(_ path: String) -> RouteLookup? { entries.last { $0.path == path }?.found }
        func keep(_ path: String, _ found: RouteLookup) {
            if entries.count >= Self.kept { entries.removeFirst() }
            entries.append((path, found))
        }
    }

    static func route(forPath path: String) -> (route: Route, captures: [String])? {
        let found = lookup(path)
        return found.index < 0 ? nil : (routes[found.index], found.captures)
    }

    private static func lookup(_ path: String) -> RouteLookup {
        // Only paths of a usual length are kept: a client's long paths cannot make a cache large.
        let keeps = path.utf8.count <= recentRoutePathBytes
        let mine = threadRoutes.value
        if let hit = mine.find(path) { return hit }
        if let hit = recentRoutes.withLock({ $0[path] }) {
            mine.keep(path, hit)
            return hit
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var found = RouteLookup(index: -1, captures: [])
        for (i, route) in routes.enumerated() {
            if let c = route.pattern.match(components) {
                found = RouteLookup(index: i, captures: c)
                break
            }
        }
        if keeps {
            mine.keep(path, found)
            recentRoutes.withLock { cache in
                if cache.count >= recentRoutesKept { cache.removeAll(keepingCapacity: true) }
                cache[path] = found
            }
        }
        return found
    }

    func bodyLimit(method: String, path: String) -> Int {
        guard let route = Self.route(forPath: path)?.route else { return 0 }
        switch route.bodyRule(method: method, path: path) {
        case .upload(let maxBytes): return maxBytes
        case .ingest: return limits.maxRequestBytes
        case .webForm: return WebUI.maxFormBytes
        case .logArchive: return logArchives?.limits.maxCompressedBytes ?? 0
        case .none: return 0
        }
    }

    /// Authentication from the request line and headers alone, done before the body is read, so
    /// an anonymous client cannot make the server buffer (or inflate) a single body byte: uploads
    /// need a valid server token; ingest needs a known public key in `X-Sentry-Auth`,
    /// `Authorization: Sentry …` or `?sentry_key=` (a key only inside the envelope's `dsn` is not
    /// accepted: reading it would mean buffering an anonymous body). The answers do not depend on
    /// the project in the path, so they cannot be used to enumerate project slugs. Any other
    /// route that is sent a body is refused here as well.
    func preflight(_ r: HTTPRequest) -> HTTPResponse? {
        let route = Self.route(forPath: r.path)?.route
        if r.method == "OPTIONS", let route, case .ingest = route.body { return IngestCORS.preflightAnswer }
        guard r.method == "POST" || r.method == "PUT" else { return nil }
        switch route?.bodyRule(method: r.method, path: r.path) ?? .none {
        case .upload:
            let known: Bool
            do { known = try r.bearerToken.map(store.isServerToken) ?? false } catch {
                return .storeUnavailable("could not check the server token", error, counting: refusals)
            }
            guard known else {
                refusals.record("auth.server-token")
                return .detail(401, "a server token is required: Authorization: Bearer \(ServerToken.prefix)…")
            }
            return nil
        case .ingest:
            guard let key = SentryAuth.key(in: r) else {
                refusals.record("auth.public-key")
                if let bearer = r.bearerToken, ServerToken.looksLikeServerToken(bearer) {
                    return .detail(401, "server tokens are refused on ingest; send with the project's public key (DSN)")
                }
                return .detail(401, "missing public key: send X-Sentry-Auth: Sentry sentry_key=<key> (or ?sentry_key=<key>)")
            }
            if ServerToken.looksLikeServerToken(key) {
                refusals.record("auth.public-key")
                return .detail(401, "server tokens are not accepted for ingest; use the project's public key")
            }
            // A key that could not be looked up is not an unknown one: SDKs drop events answered 401.
            let record: PublicKeyRecord?
            do { record = try store.publicKey(key) } catch { return .storeUnavailable("could not look up the public key", error, counting: refusals) }
            if record == nil {
                refusals.record("auth.public-key")
                return .detail(401, "unknown public key")
            }
            return nil
        case .webForm:
            return nil  // the session and CSRF token are checked by the page (Web/WebUI.swift)
        case .logArchive:
            // Key, allowlist, metadata and the upload switch, all from headers (LogArchiveReceiver).
            guard let logArchives else { return .detail(404, "no such endpoint: \(r.path)") }
            return logArchives.preflight(r, projectRef: r.pathComponents[1])
        case .none:
            refusals.record("route.no-body")
            return refusal(route, r)
        }
    }

    func responseHeaders(method: String, path: String) -> [(String, String)] {
        guard let route = Self.route(forPath: path)?.route, case .ingest = route.body else { return [] }
        return IngestCORS.responseHeaders
    }

    private func refusal(_ route: Route?, _ r: HTTPRequest) -> HTTPResponse {
        guard let refusal = route?.refusal, refusal.status != Self.notFound.status else { return .detail(404, "no such endpoint: \(r.path)") }
        return .detail(refusal.status, refusal.message)
    }

    func handle(_ r: HTTPRequest) -> HTTPResponse {
        guard let (route, captures) = Self.route(forPath: r.path) else { return .detail(404, "no such endpoint: \(r.path)") }
        if route.credential == .serverToken {
            do {
                guard let token = r.bearerToken, try store.isServerToken(token) else {
                    return .detail(401, "a server token is required: Authorization: Bearer \(ServerToken.prefix)…")
                }
            } catch {
                return .storeUnavailable("could not check the server token", error, counting: refusals)
            }
        }
        do {
            guard route.methods?.contains(r.method) ?? true else { return refusal(route, r) }
            return ServerBaseURL.absoluteLinks(try route.handler(self, r, captures), r, publicURL: publicURL)
        } catch {
            return .detail(500, "internal error: \(error)")
        }
    }
}
