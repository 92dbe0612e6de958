// Sentry's issue-update and release endpoints, as sentry-cli and scripts call them (server token):
//   PUT /api/0/issues/<id>/                              {"status", "statusDetails"}
//   PUT /api/0/projects/<org>/<project>/issues/?id=1&id=2 the same for many (without ids: every
//                                                         issue, or those ?status= and ?query= match)
//   GET /api/0/                                          who the token is (`sentry-cli info`)
//   /api/0/organizations/<org>/releases/[<version>/[deploys/]] and the project-scoped form
//   /api/0/projects/<org>/<project>/releases/…           create, finalize, list, deploys
import Foundation
import FaultlineProtocol

struct LifecycleAPI {
    let lifecycle: Lifecycle
    var store: any Store { lifecycle.store }
    var database: any SQLDatabase { lifecycle.database }
    /// The most ids one bulk update takes (Sentry pages bulk updates by 100; sentry-cli sends one page).
    static let maxBulkIDs = 1000
    /// The most issues one "every issue" update changes (sentry-cli's `--all`).
    static let maxAllIssues = 100_000

    private func answer(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch let e as LifecycleError {
            return .detail(e.status, e.description)
        } catch {
            return .detail(500, "\(error)")
        }
    }

    private func parseBody(_ r: HTTPRequest) throws -> JSONValue {
        guard !r.body.isEmpty else { return .object([:]) }
        guard let j = try? JSONValue.parse(r.body), j.objectValue != nil else { throw LifecycleError.badRequest("the body must be a JSON object") }
        return j
    }

    private func statusChange(_ body: JSONValue) throws -> (IssueStatus, IssueStatusDetails)? {
        guard let raw = body["status"] else { return nil }
        if raw.stringValue == "resolvedInNextRelease" {  // Sentry's shortcut
            return (.resolved, IssueStatusDetails(inNextRelease: true))
        }
        guard let s = raw.stringValue, let status = IssueStatus(sentry: s) else {
            throw LifecycleError.badRequest("status must be one of resolved, unresolved, ignored")
        }
        var details = try IssueStatusDetails(sentry: body["statusDetails"], now: Date().timeIntervalSince1970)
        // Sentry's shortcuts: `resolvedInNextRelease` as a status, `ignoreDuration` at top level.
        if body["ignoreDuration"] != nil, details.ignoreUntil == nil {
            details = try IssueStatusDetails(sentry: ["ignoreDuration": body["ignoreDuration"]!], now: Date().timeIntervalSince1970)
        }
        return (status, details)
    }

    /// Sentry's `assignedTo`: a name (or `user:name`) assigns, null or "" unassigns; absent: no change.
    private func assignment(_ body: JSONValue) throws -> (name: String?, Void)? {
        guard let raw = body["assignedTo"] else { return nil }
        guard let text = raw.stringValue, !text.isEmpty else { return (nil, ()) }
        let name = text.hasPrefix("user:") ? String(text.dropFirst(5)) : text
        return (try IssueNotes.validateAssignee(name), ())
    }

    // MARK: Comments: /api/0/issues/<id>/comments/

    func comments(_ r: HTTPRequest, id idText: String) -> HTTPResponse {
        answer {
            guard let id = Int64(idText), let issue = try store.issue(id: id) else { throw LifecycleError.notFound("no such issue") }
            if r.method == "POST" {
                let body = try parseBody(r)
                let text = try IssueNotes.validateComment(body["text"]?.stringValue ?? body["data"]?["text"]?.stringValue ?? "")
                let author = "token " + String((r.bearerToken ?? "").prefix(9)) + "…"
                let now = Date().timeIntervalSince1970
                let commentID = try database.writing { c in try IssueNotes.comment(c, issueID: issue.id, author: author, text: text, now: now) }
                return .json(IssueNotes.commentJSON(IssueComment(id: commentID, issueID: issue.id, author: author, text: text, created: now)), status: 201)
            }
            return .json(.array(try database.reading { try IssueNotes.comments($0, issueID: issue.id) }.map(IssueNotes.commentJSON)))
        }
    }

    private func changeJSON(_ status: IssueStatus, _ details: IssueStatusDetails) -> JSONValue {
        ["status": .string(status.rawValue), "statusDetails": details.json]
    }

    // MARK: Issues

    func updateIssue(_ r: HTTPRequest, id idText: String) -> HTTPResponse {
        answer {
            guard let id = Int64(idText), let issue = try store.issue(id: id) else { throw LifecycleError.notFound("no such issue") }
            let body = try parseBody(r)
            let change = try statusChange(body)
            let assignee = try assignment(body)
            if let (status, details) = change {
                try lifecycle.update(issueIDs: [issue.id], status: status, details: details)
            }
            if let assignee {
                try database.writing { c in try IssueNotes.assign(c, issueID: issue.id, to: assignee.name, now: Date().timeIntervalSince1970) }
            }
            let state = try lifecycle.state(issueID: issue.id)
            var o = changeJSON(state.status, state.details)
            o["id"] = .string(String(issue.id))
            o["assignedTo"] = IssueNotes.assigneeJSON(try database.reading { try IssueNotes.assignee($0, issueID: issue.id) })
            return .json(o)
        }
    }

    func bulkUpdate(_ r: HTTPRequest, project slug: String) -> HTTPResponse {
        answer {
            guard let project = try store.project(idOrSlug: slug) else { throw LifecycleError.notFound("no project '\(slug)'") }
            let body = try parseBody(r)
            guard let (status, details) = try statusChange(body) else { throw LifecycleError.badRequest("nothing to change: send a status") }
            var ids: [Int64] = []
            if let given = r.queryValues["id"], !given.isEmpty {
                guard given.count <= Self.maxBulkIDs else { throw LifecycleError.badRequest("at most \(Self.maxBulkIDs) ids per request") }
                for text in given {
                    guard let id = Int64(text), let issue = try store.issue(id: id), issue.projectID == project.id else {
                        throw LifecycleError.badRequest("no issue \(text) in project '\(slug)'")
                    }
                    ids.append(issue.id)
                }
            } else {
                // sentry-cli's `--all` sends no filter (every issue), `--status S` sends ?status=S;
                // `?query=` is the issues list's search (a term this server cannot apply is refused).
                var q: IssueQuery
                do { q = try IssueSearchRequest.query(r) } catch let refused as IssueSearchRequest.Refused {
                    throw LifecycleError.badRequest(refused.detail)
                }
                // Every matching issue, a keyset page at a time by id (an event arriving meanwhile
                // moves an issue in last-seen order, and a page by it could skip that issue), up
                // to `maxAllIssues`; read before any is changed, so the change cannot move one out
                // of the search or into it.
                q.sort = .id
                q.limit = Self.maxBulkIDs
                while ids.count < Self.maxAllIssues {
                    let page = try IssueSearchRequest.heads(database, projectID: project.id, q)
                    guard let last = page.last else { break }
                    ids += page.map(\.id)
                    q.after = (last.value, last.id)
                }
            }
            try lifecycle.update(issueIDs: ids, status: status, details: details)
            return .json(changeJSON(status, details))
        }
    }

    /// `GET /api/0/`: the token's identity and what it may do (`sentry-cli info`).
    func identity(_ r: HTTPRequest) -> HTTPResponse {
        let prefix = String((r.bearerToken ?? "").prefix(9))
        return .json([
            "version": "0",
            "user": ["id": "1", "name": .string("server token \(prefix)…"), "username": "faultline", "email": "faultline@localhost"],
            "auth": ["scopes": ["org:read", "project:read", "project:write", "project:releases", "event:read", "event:write", "event:admin"]]
        ])
    }

    // MARK: Releases

    /// Every release route; `path` is the components after `releases` (empty, [version], or
    /// [version, "deploys"]); `projectSlug` is set on the project-scoped form.
    func releases(_ r: HTTPRequest, path: [String], projectSlug: String?) -> HTTPResponse {
        answer {
            let scoped = try projectSlug.map { slug -> ProjectRecord in
                guard let p = try store.project(idOrSlug: slug) else { throw LifecycleError.notFound("no project '\(slug)'") }
                return p
            }
            let now = Date().timeIntervalSince1970
            switch (r.method, path.count) {
            case ("POST", 0):
                let body = try parseBody(r)
                guard let version = body["version"]?.stringValue, ReleaseName.isValid(version) else {
                    throw LifecycleError.badRequest("version must be 1–200 characters without '/' or control characters")
                }
                let projects = try scoped.map { [$0] } ?? projectsNamed(body["projects"])
                guard !projects.isEmpty else { throw LifecycleError.badRequest("name the release's projects: {\"projects\": [\"slug\"]}") }
                let released = EventFields.timestamp(body["dateReleased"])
                try database.writing { c in
                    for p in projects { try ReleaseRows.create(c, projectID: p.id, version: version, dateReleased: released, now: now) }
                }
                return .json(try releaseJSON(version, projects: projects, health: nil), status: 201)
            case ("GET", 0):
                // Keyset pages, newest first (`KeysetPage`: `?cursor&limit`, the next in `Link`).
                let page: KeysetPage
                switch KeysetPage.of(r) {
                case .success(let p): page = p
                case .failure(let e): return e.response
                }
                var after: (created: Double, version: String)?
                if let c = page.cursor {
                    guard let position = ReleaseRows.position(c) else { return KeysetPage.KeysetError().response }
                    after = position
                }
                let projects = try scoped.map { [$0] } ?? store.projects()
                let rows = try database.reading { try ReleaseRows.page($0, projectID: scoped?.id, after: after, limit: page.limit) }
                let health = try self.health(r, scoped: scoped)
                let next = rows.count == page.limit ? rows.last.map { ReleaseRows.cursor(created: $0.created, version: $0.version) } : nil
                return KeysetPage.response(try rows.map { try releaseJSON($0.version, projects: projects, health: health) }, next: next, request: r)
            case ("GET", 1), ("PUT", 1):
                let version = path[0]
                let projects = try projectsHaving(version, scoped)
                guard !projects.isEmpty else { throw LifecycleError.notFound("no release '\(version)'") }
                if r.method == "PUT" {
                    let body = try parseBody(r)
                    if let raw = body["dateReleased"] {
                        guard raw.stringValue != nil, let at = EventFields.timestamp(raw) else {
                            throw LifecycleError.badRequest("dateReleased must be an RFC 3339 time")
                        }
                        try database.writing { c in for p in projects { try ReleaseRows.finalize(c, projectID: p.id, version: version, at: at) } }
                    }
                }
                return .json(try releaseJSON(version, projects: projects, health: try self.health(r, scoped: scoped)))
            case ("POST", 2) where path[1] == "deploys", ("GET", 2) where path[1] == "deploys":
                let version = path[0]
                let projects = try projectsHaving(version, scoped)
                guard !projects.isEmpty else { throw LifecycleError.notFound("no release '\(version)'") }
                if r.method == "GET" {
                    let deploys = try database.reading { try ReleaseRows.deploys($0, projectIDs: projects.map(\.id), version: version) }
                    return .json(.array(deploys.map(deployJSON)))
                }
                let body = try parseBody(r)
                guard let environment = body["environment"]?.stringValue, !environment.isEmpty, environment.utf8.count <= 200 else {
                    throw LifecycleError.badRequest("a deploy needs an environment")
                }
                let name = body["name"]?.stringValue
                let id = try database.writing { c in
                    try projects.map { try ReleaseRows.addDeploy(c, projectID: $0.id, version: version, environment: environment, name: name, now: now) }.first
                        ?? 0
                }
                return .json(deployJSON(DeployRecord(id: id, version: version, environment: environment, name: name, created: now)), status: 201)
            default:
                return .detail(405, "method not allowed")
            }
        }
    }

    private func projectsNamed(_ json: JSONValue?) throws -> [ProjectRecord] {
        try (json?.arrayValue ?? []).map { v in
            guard let slug = v.stringValue, let p = try store.project(idOrSlug: slug) else {
                throw LifecycleError.badRequest("no project \(v.jsonString)")
            }
            return p
        }
    }

    private func projectsHaving(_ version: String, _ scoped: ProjectRecord?) throws -> [ProjectRecord] {
        let candidates = try scoped.map { [$0] } ?? store.projects()
        return try database.reading { c in
            try candidates.filter { p in try !ReleaseRows.releases(c, projectIDs: [p.id], version: version).isEmpty }
        }
    }

    /// With `?health=1` (Sentry's switch) below one project's path: its session tally per release,
    /// read once per request over the release-health page's bounds (`ReleaseHealthAPI.tally`).
    /// The organization's list leaves it out: one read per project would be unbounded in projects.
    private func health(_ r: HTTPRequest, scoped: ProjectRecord?) throws -> [Int64: [String: SessionTally]]? {
        guard let h = r.query["health"], h == "1" || h == "true", let project = scoped else { return nil }
        let tally = try ReleaseHealthAPI.tally(WebQueries(store: store, database: database), projectID: project.id, since: nil).tally
        return [project.id: tally.mapValues(ReleaseHealthAPI.total)]
    }

    private func releaseJSON(_ version: String, projects: [ProjectRecord], health: [Int64: [String: SessionTally]]?) throws -> JSONValue {
        let (records, deploys, activity) = try database.reading { c in
            (
                try ReleaseRows.releases(c, projectIDs: projects.map(\.id), version: version),
                try ReleaseRows.deploys(c, projectIDs: projects.map(\.id), version: version),
                try ReleaseActivity.tally(c, projectIDs: projects.map(\.id), version: version)
            )
        }
        let created = records.map(\.created).min() ?? Date().timeIntervalSince1970
        let released = records.compactMap(\.dateReleased).min()
        let owning = projects.filter { p in records.contains { $0.projectID == p.id } }
        return [
            "version": .string(version), "shortVersion": .string(version), "ref": .null, "url": .null,
            "dateCreated": .string(SentryTimestamp.rfc3339(created)),
            "dateReleased": released.map { .string(SentryTimestamp.rfc3339($0)) } ?? .null,
            "newGroups": .int(activity?.newGroups ?? 0), "commitCount": 0, "lastCommit": .null,
            "firstEvent": activity.map { .string(SentryTimestamp.rfc3339($0.firstEvent)) } ?? .null,
            "lastEvent": activity.map { .string(SentryTimestamp.rfc3339($0.lastEvent)) } ?? .null,
            "deployCount": .int(Int64(deploys.count)), "lastDeploy": deploys.last.map(deployJSON) ?? .null,
            "projects": .array(
                owning.map { p in
                    var o: [String: JSONValue] = ["id": .int(p.id), "slug": .string(p.slug), "name": .string(p.name)]
                    if let health { o["healthData"] = ReleaseHealthAPI.sentryHealthData(health[p.id]?[version] ?? SessionTally()) }
                    return .object(o)
                })
        ]
    }

    private func deployJSON(_ d: DeployRecord) -> JSONValue {
        [
            "id": .string(String(d.id)), "environment": .string(d.environment), "name": d.name.map(JSONValue.string) ?? .null,
            "url": .null, "dateStarted": .null, "dateFinished": .string(SentryTimestamp.rfc3339(d.created))
        ]
    }
}
