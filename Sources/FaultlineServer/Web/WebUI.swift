// The web pages under /ui/: the seam where a page plugs in. `handle` authenticates (session
// cookie), checks CSRF on every POST, dispatches on the path to one page type per file, and
// adds the security headers every response carries. Pages return HTML built only through
// `HTML.esc`/`HTML.safeExternalURL`; no page emits script or inline style.
import FaultlineThreads
import Foundation
import FaultlineProtocol

public final class WebUI: @unchecked Sendable {
    let stores: Stores
    let store: any Store
    /// The SQL the pages and their queries run (both stores speak it).
    let database: any SQLDatabase
    let queries: WebQueries
    let symbolicator: FrameSymbolicating
    /// The stack page's lookups run on its pool, within its budget.
    let reads: ReadSymbolication
    let debugFiles: DebugFileStore
    let backfiller: Backfiller
    /// Sources uploaded with debug files: the issue page shows the lines around a frame (SourceLines).
    let sourceFiles: SourceFiles?
    let sessions: WebSessions
    /// Cookies get `Secure` when browsers reach us over TLS (public URL https).
    let publicURLIsHTTPS: Bool
    /// Password logins: failures per user name, one hash at a time (LoginThrottle).
    let loginThrottle = LoginThrottle()
    /// The environment indexer; its state is when the next pass is due.
    private let indexer = WorkerThread(name: "faultline-web-indexer", state: Date.distantPast)

    /// Every response: a strict CSP (no script at all, styles only from our CSS file, forms only
    /// to us, never framed), no MIME sniffing, no referrer leaking issue URLs to linked sites.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin")
    ]

    init(
        stores: Stores, database: any SQLDatabase, reads: ReadSymbolication, debugFiles: DebugFileStore, backfiller: Backfiller, sourceFiles: SourceFiles?,
        publicURL: String?
    ) throws {
        self.stores = stores
        self.store = stores.core
        self.database = database
        self.queries = WebQueries(store: stores.core, database: database)
        self.sessions = WebSessions(queries: queries)
        self.symbolicator = reads.symbolicator
        self.reads = reads
        self.debugFiles = debugFiles
        self.backfiller = backfiller
        self.sourceFiles = sourceFiles
        self.publicURLIsHTTPS = publicURL?.lowercased().hasPrefix("https://") ?? false
    }

    /// Starts the environment indexer (issues list's environment filter): grouping records each
    /// new occurrence's (environment, stack) itself, so this background pass only catches up on
    /// the occurrences grouped before this server started (by an older binary, or a crash between),
    /// a batch at a time, then rests. It used to read every new event again (inflate and parse,
    /// ~10 % of the server's CPU in an ingest storm).
    func start() {
        // The last grouped id at start, read on the first pass (nil until then).
        nonisolated(unsafe) var bound: Int64?
        // Weak: the thread ends (at its next pass) once the pages are gone, stopped or not.
        indexer.start { [weak self] due, stopping in
            guard let self, !stopping else { return .exit }
            // distantFuture: caught up, or a pass running (NSCondition traps on so far a deadline).
            if due == .distantFuture { return .wait(until: nil) }
            if Date() < due { return .wait(until: due) }
            due = .distantFuture
            return .run { [weak self] in
                guard let self else { return }
                if bound == nil { bound = try? self.queries.lastGroupedOccurrence() }
                guard let b = bound else { self.indexer.update { $0 = Date().addingTimeInterval(1) }; return }
                // A full batch means more is waiting (a backlog after a restart): go on at once;
                // otherwise the catch-up is done (a failed pass is retried a second later).
                let done = try? self.queries.indexEnvironments(batch: 5000, through: b)
                self.indexer.update { $0 = done == 5000 ? .distantPast : done == nil ? Date().addingTimeInterval(1) : .distantFuture }
            }
        }
    }

    func stop() {
        indexer.requestStop()
    }

    /// Largest form body we accept (login, resolve, merge are a few hundred bytes).
    static let maxFormBytes = 16 * 1024

    // MARK: Dispatch

    func handle(_ r: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        do { response = try route(r) } catch { response = Self.page(status: 500, WebLayout.errorPage("Internal error", "\(error)")) }
        response.headers += Self.securityHeaders
        if !response.headers.contains(where: { $0.0 == "Cache-Control" }) { response.headers.append(("Cache-Control", "no-store")) }
        return response
    }

    func route(_ r: HTTPRequest) throws -> HTTPResponse {
        let p = Array(r.pathComponents.dropFirst())  // after "ui"
        if p == ["static", "app.css"] {
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "max-age=300")],
                body: .data(Data(WebStyle.css.utf8)))
        }
        if p == ["login"] { return try LoginPage(ui: self).handle(r) }
        guard r.method == "GET" || r.method == "HEAD" || r.method == "POST" else {
            return Self.page(status: 405, WebLayout.errorPage("Method not allowed", r.method))
        }
        guard let session = sessions.session(for: r) else {
            guard r.method != "POST" else { return Self.page(status: 403, WebLayout.errorPage("Not logged in", "Log in again.")) }
            // The login goes back to the page asked for.
            return Self.redirect("/ui/login?next=" + HTML.q(ReturnPath.of(r)))
        }
        let ctx = WebContext(ui: self, session: session, request: r)
        if r.method == "POST" {
            if let refusal = checkForm(r, session: session) { return refusal }
        }
        switch p {
        case []: return Self.redirect("/ui/projects")
        case ["logout"]:
            guard r.method == "POST" else { return Self.page(status: 405, WebLayout.errorPage("Method not allowed", "Log out with the button.")) }
            sessions.end(session.id)
            return HTTPResponse(
                status: 303,
                headers: [
                    ("Location", "/ui/login"),
                    ("Set-Cookie", WebSessions.setCookie(WebSessions.cookieName, "", secure: isSecure(r), maxAge: 0))
                ])
        case ["projects"]: return try ProjectsPage(ctx: ctx).render()
        case ["debug-files"]: return try DebugFilesPage(ctx: ctx).render()
        case let x where x.count == 2 && x[0] == "debug-files": return try DebugFilesPage(ctx: ctx).renderFile(x[1])
        case let x where x.count == 3 && x[0] == "projects":
            guard let project = try store.project(idOrSlug: x[1]) else { return Self.notFound("no project") }
            switch x[2] {
            case "issues":
                let page = IssuesPage(ctx: ctx, project: project)
                return try r.method == "POST" ? page.act() : page.render()
            case "health": return try HealthPage(ctx: ctx, project: project).render()
            case "logs": return try LogsPage(ctx: ctx, project: project).render()
            case "traces": return try TracesPage(ctx: ctx, project: project).render()
            case "alerts": return try AlertsPage(ctx: ctx, project: project).render()
            default: return Self.notFound("no such page")
            }
        case let x where x.count == 4 && x[0] == "projects" && x[2] == "traces":
            guard let project = try store.project(idOrSlug: x[1]) else { return Self.notFound("no project") }
            return try TracePage(ctx: ctx, project: project, traceIDText: x[3]).render()
        case let x where x.count == 4 && x[0] == "projects" && x[2] == "alerts" && r.method == "POST":
            guard let project = try store.project(idOrSlug: x[1]) else { return Self.notFound("no project") }
            return try AlertsPage(ctx: ctx, project: project).act(x[3])
        case let x where x.count == 3 && x[0] == "attachments":
            return try AttachmentsSection(ctx: ctx).download(occurrenceID: x[1], attachmentID: x[2])
        case let x where x.count >= 2 && x[0] == "issues":
            guard let id = Int64(x[1]) else { return Self.notFound("no such issue") }
            let page = IssuePage(ctx: ctx, requestedID: id)
            if x.count == 2 { return try page.render() }
            if x.count == 3, r.method == "POST" { return try page.act(x[2]) }
            return Self.notFound("no such page")
        default:
            return Self.notFound("no such page")
        }
    }

    /// A POST must carry the session's CSRF token and, when the browser says where it comes
    /// from, come from this origin.
    func checkForm(_ r: HTTPRequest, session: WebSession) -> HTTPResponse? {
        if let site = r.header("sec-fetch-site"), site != "same-origin", site != "none" {
            return Self.page(status: 403, WebLayout.errorPage("Refused", "cross-site form submission"))
        }
        let form = Self.form(r.body)
        guard WebSessions.same(form["_csrf"] ?? "", session.csrf) else {
            return Self.page(status: 403, WebLayout.errorPage("Refused", "the form's CSRF token is missing or stale; reload the page"))
        }
        return nil
    }

    func isSecure(_ r: HTTPRequest) -> Bool { publicURLIsHTTPS || r.header("x-forwarded-proto")?.lowercased() == "https" }

    // MARK: Helpers shared by pages

    static func page(status: Int = 200, _ html: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + headers, body: .data(Data(html.utf8)))
    }

    static func redirect(_ location: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("Location", location)] + headers)
    }

    static func notFound(_ what: String) -> HTTPResponse { page(status: 404, WebLayout.errorPage("Not found", what)) }

    /// application/x-www-form-urlencoded body → fields (first value wins).
    static func form(_ body: Data) -> [String: String] {
        var out: [String: String] = [:]
        for (k, v) in formPairs(body) where out[k] == nil { out[k] = v }
        return out
    }

    /// Every field of a form body in order, repeated names included (the issues list's ticked rows).
    static func formPairs(_ body: Data) -> [(String, String)] {
        guard body.count <= maxFormBytes else { return [] }
        var out: [(String, String)] = []
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func dec(_ s: Substring) -> String { String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            out.append((dec(kv[0]), kv.count > 1 ? dec(kv[1]) : ""))
        }
        return out
    }

    /// Remembers which server token uploaded a debug file (the debug files page shows it). Called
    /// by the router after an assemble request; only states the server answered `ok` count.
    func noteAssemble(_ r: HTTPRequest, _ response: HTTPResponse) {
        guard let token = r.bearerToken, case .data(let d) = response.body, let json = try? JSONParser.parse(d), let files = json.objectValue else { return }
        let name = (try? queries.tokenName(token: token)) ?? nil
        for (_, v) in files where v["state"]?.stringValue == "ok" {
            if let id = v["dif"]?["id"]?.stringValue { try? queries.recordUploader(buildID: id, tokenName: name ?? "?") }
        }
    }
}
