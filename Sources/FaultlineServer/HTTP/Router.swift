// Maps paths to handlers and applies the two kinds of authentication: public keys on ingest
// (inside IngestHandler), Bearer server tokens on everything that uploads or reads.
import Foundation
import FaultlineProtocol

final class Router: HTTPHandling, @unchecked Sendable {
    let store: Store
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
    /// The web pages under /ui/ (Web/WebUI.swift); set once by FaultlineServer before start.
    var web: WebUI?
    /// Log archives (LogArchives/); set once by FaultlineServer before start.
    var logArchives: LogArchives?

    init(store: Store, ingest: IngestHandler, chunks: ChunkUpload, assembler: Assembler, read: ReadAPI, debuginfod: Debuginfod,
         status: DebugFileStatus, sources: SourceFiles, limits: IngestLimits, refusals: Refusals, publicURL: String? = nil,
         health: @escaping @Sendable () -> JSONValue) {
        self.store = store; self.ingest = ingest; self.chunks = chunks; self.assembler = assembler; self.refusals = refusals
        self.read = read; self.debuginfod = debuginfod; self.status = status; self.sources = sources; self.limits = limits; self.health = health
        self.publicURL = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    /// The only routes that take a body: ingest, the token-authenticated `/api/0/` POSTs, and the
    /// web pages' small forms (login among them, so anonymous: at most `WebUI.maxFormBytes`).
    /// Everything else gets a zero limit, so a body there is refused (or discarded), never kept.
    enum BodyRoute { case ingest, upload, webForm, logArchive, none }

    static func bodyRoute(method: String, path: String) -> BodyRoute {
        guard method == "POST" || method == "PUT" else { return .none }
        if method == "POST" && path.hasPrefix("/ui/") { return .webForm }
        let p = path.split(separator: "/", omittingEmptySubsequences: true)
        guard p.first == "api", p.count >= 2 else { return .none }
        if p[1] == "0" { return .upload }
        if p.count == 3 && p[2] == "log-archive" && method == "POST" { return .logArchive }
        return p.count == 3 && (p[2] == "envelope" || p[2] == "store") && method == "POST" ? .ingest : .none
    }

    func bodyLimit(method: String, path: String) -> Int {
        switch Self.bodyRoute(method: method, path: path) {
        case .upload: return path.hasSuffix("/chunk-upload/") ? ChunkUpload.maxRequestSize + 1024 * 1024 : 4 * 1024 * 1024
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
        guard r.method == "POST" || r.method == "PUT" else { return nil }
        switch Self.bodyRoute(method: r.method, path: r.path) {
        case .upload:
            guard let token = r.bearerToken, (try? store.isServerToken(token)) == true else {
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
            if (try? store.publicKey(key)) == nil {
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
            let p = r.pathComponents
            if p == ["health"] || p.first == "buildid" { return .detail(405, "method not allowed") }
            if p.first == "api", p.count == 3, p[2] == "envelope" || p[2] == "store" { return .detail(405, "ingest takes POST") }
            return .detail(404, "no such endpoint: \(r.path)")
        }
    }

    func handle(_ r: HTTPRequest) -> HTTPResponse {
        let p = r.pathComponents
        do {
            if p == ["health"] { return .json(health()) }
            if let web, p.isEmpty || p.first == "ui" {
                return p.isEmpty ? HTTPResponse(status: 303, headers: [("Location", "/ui/")]) : web.handle(r)
            }
            if p.first == "buildid" {
                guard r.method == "GET" || r.method == "HEAD" else { return .detail(405, "method not allowed") }
                return debuginfod.handle(p)
            }
            guard p.first == "api", p.count >= 2 else { return .detail(404, "no such endpoint: \(r.path)") }
            if p[1] != "0", p.count == 3, p[2] == "log-archive", let logArchives {
                return logArchives.receive(r, projectRef: p[1])
            }
            if p[1] != "0" {
                guard p.count == 3, p[2] == "envelope" || p[2] == "store" else { return .detail(404, "no such endpoint: \(r.path)") }
                guard r.method == "POST" else { return .detail(405, "ingest takes POST") }
                return ingest.handle(r, project: p[1], endpoint: p[2] == "envelope" ? .envelope : .store)
            }
            guard let token = r.bearerToken, try store.isServerToken(token) else {
                return .detail(401, "a server token is required: Authorization: Bearer \(ServerToken.prefix)…")
            }
            let rest = Array(p.dropFirst(2))
            if rest.count == 3, rest[0] == "organizations", rest[2] == "chunk-upload" {
                if r.method == "GET" {
                    // Behind a TLS proxy the Host header names the inside: use the configured public URL.
                    let base = publicURL ?? "http://\(r.header("host") ?? "127.0.0.1")"
                    return .json(chunks.options(baseURL: base, org: rest[1]))
                }
                if r.method == "POST" { return chunks.receive(r) }
                return .detail(405, "method not allowed")
            }
            if rest.count == 6, rest[0] == "projects", rest[3] == "files", rest[4] == "difs", rest[5] == "assemble" {
                guard r.method == "POST" else { return .detail(405, "method not allowed") }
                guard try store.project(idOrSlug: rest[2]) != nil else { return .detail(404, "no project '\(rest[2])'") }
                let response = assembler.handle(r)
                web?.noteAssemble(r, response)
                return response
            }
            if rest.count == 3, rest[0] == "debug-files", rest[2] == "sources" {
                guard r.method == "POST" else { return .detail(405, "method not allowed") }
                return try sources.handle(r, buildIDHex: rest[1])
            }
            if rest.count >= 3, rest[0] == "projects", rest[2] == "log-archives" || rest[2] == "log-upload", let logArchives {
                return try logArchives.api(r, rest)
            }
            guard r.method == "GET" else { return .detail(405, "method not allowed") }
            if rest == ["debug-files", "status"] { return try status.handle(r) }
            return try read.handle(r, rest)
        } catch {
            return .detail(500, "internal error: \(error)")
        }
    }
}
