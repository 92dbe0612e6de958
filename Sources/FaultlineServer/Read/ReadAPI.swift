// The JSON read API (Bearer server token): projects, issues with the representative stack,
// occurrences, debug files, backfill progress.
import Foundation
import FaultlineProtocol
import Synchronization

public final class ReadAPI: @unchecked Sendable {
    let store: any Store
    let issueReads: any IssueReads
    let administration: any ProjectAdministrationStore
    let records: any DebugFileRecordStore
    let jobs: any BackfillJobs
    /// Nil: events list no attachments and the attachment routes answer 404.
    let attachments: (any AttachmentStore)?
    let symbolicator: FrameSymbolicating
    /// Looks up what is not cached off the HTTP thread, within its budget.
    let reads: ReadSymbolication
    /// Adds each issue's status, short id and Sentry-style fields (nil: a store without them).
    var lifecycle: Lifecycle?
    var publicURL: String?
    private struct LevelKey: Equatable { var count: Int64; var lastSeen: Double }
    private let levels = Mutex<[Int64: (key: LevelKey, level: String)]>([:])

    public init(stores: Stores, reads: ReadSymbolication) {
        self.store = stores.core
        self.issueReads = stores.issueReads
        self.administration = stores.projects
        self.records = stores.debugFiles
        self.jobs = stores.backfills
        self.attachments = stores.attachments
        self.symbolicator = reads.symbolicator
        self.reads = reads
    }

    func projectJSON(_ p: ProjectRecord) throws -> JSONValue {
        let c = try issueReads.counts(projectID: p.id)
        let items = try issueReads.itemCounts(projectID: p.id)
        var crashFree: JSONValue = .null
        if items.sessionsTotal > 0 {
            crashFree = .double(1.0 - Double(items.sessionsCrashed) / Double(items.sessionsTotal))
        }
        let keys = try administration.publicKeys(projectID: p.id).map { k -> JSONValue in
            ["public_key": .string(k.key.value), "allowed_app_ids": .array(k.allowedAppIDs.map { .string($0) })]
        }
        return [
            "id": .string(String(p.id)), "slug": .string(p.slug), "name": .string(p.name),
            "occurrences": .int(c.occurrences), "processed": .int(c.processed), "issues": .int(c.issues),
            "items": .object(items.byType.mapValues { .int($0) }),
            "sessions": ["total": .int(items.sessionsTotal), "crashed": .int(items.sessionsCrashed), "crash_free_rate": crashFree],
            "keys": .array(keys)
        ]
    }

    func issueJSON(_ i: IssueRecord, withStack: Bool, project: ProjectRecord? = nil) throws -> JSONValue {
        let p = try project ?? store.project(idOrSlug: String(i.projectID))
        var o: [String: JSONValue] = [
            "id": .string(String(i.id)), "project": p.map(Self.projectReference) ?? ["id": .string(String(i.projectID))], "title": .string(i.title),
            "culprit": .string(i.culprit), "fingerprint": .string(i.fingerprint), "first_seen": .double(i.firstSeen), "last_seen": .double(i.lastSeen),
            "count": .int(i.count), "releases": .array(i.releases.map { .string($0) }), "symbolicated": .bool(i.symbolicated)
        ]
        if let lifecycle, let p {
            for (k, v) in try lifecycle.sentryFields(i, projectSlug: p.slug, publicURL: publicURL) { o[k] = v }
        }
        if !withStack { o["level"] = .string(try level(of: i)) }
        if withStack, let latest = try issueReads.occurrences(issueID: i.id, limit: 1, offset: 0).first {
            let event = try StoredEvent.decodeForReading(latest)
            o["level"] = .string(EventFields.sentryLevel(event["level"]))
            o["representative_event"] = .string(latest.eventID)
            let pending = reads.settle(EventRenderer.lookups(of: event))
            o["stack"] = .array(EventRenderer.stack(of: event, symbolicator: symbolicator, pending: pending))
            o["symbolication"] = EventRenderer.status(pending)
        }
        return .object(o)
    }

    /// An issue's level is its latest event's (Sentry's): read from that event once per change of
    /// the issue (a new occurrence changes its count or last seen), not on every list.
    private func level(of issue: IssueRecord) throws -> String {
        let key = LevelKey(count: issue.count, lastSeen: issue.lastSeen)
        if let cached = levels.withLock({ $0[issue.id] }), cached.key == key { return cached.level }
        var level = "error"
        if let latest = try issueReads.occurrences(issueID: issue.id, limit: 1, offset: 0).first,
            let event = try? StoredEvent.decode(latest.compressedEvent, keeping: ["level"])
        {
            level = EventFields.sentryLevel(event["level"])
        }
        levels.withLock { cache in
            if cache.count > 50_000 { cache.removeAll() }
            cache[issue.id] = (key, level)
        }
        return level
    }

    /// An event in a list, as Sentry names it (`id` and `eventID`: the event id every other
    /// endpoint takes; `groupID`; `dateCreated`), with this server's own fields beside.
    func occurrenceJSON(_ o: StoredOccurrence) -> JSONValue {
        [
            "id": .string(o.eventID), "eventID": .string(o.eventID), "event_id": .string(o.eventID), "occurrence_id": .string(String(o.id)),
            "groupID": o.issueID.map { .string(String($0)) } ?? .null, "issue": o.issueID.map { .string(String($0)) } ?? .null,
            "dateCreated": .string(Date(timeIntervalSince1970: o.timestamp).formatted(.iso8601)),
            "dateReceived": .string(Date(timeIntervalSince1970: o.received).formatted(.iso8601)),
            "received": .double(o.received), "timestamp": .double(o.timestamp), "release": o.release.map { .string($0) } ?? .null
        ]
    }

    func limitOffset(_ r: HTTPRequest) -> (Int, Int) {
        let limit = min(max(Int(r.query["limit"] ?? "") ?? 100, 1), 1000)
        let offset = min(max(Int(r.query["offset"] ?? "") ?? 0, 0), 1 << 40)  // no row count comes near; no overflow downstream
        return (limit, offset)
    }

    // One handler per route (the paths are in Router.routes, all below /api/0/).

    func projects() throws -> HTTPResponse { .json(.array(try store.projects().map(projectJSON))) }

    func project(_ slug: String) throws -> HTTPResponse {
        guard let project = try store.project(idOrSlug: slug) else { return .detail(404, "no project '\(slug)'") }
        return .json(try projectJSON(project))
    }

    func issues(_ r: HTTPRequest, project slug: String) throws -> HTTPResponse {
        guard let project = try store.project(idOrSlug: slug) else { return .detail(404, "no project '\(slug)'") }
        if let database = lifecycle?.database { return try issues(r, project: project, database: database) }
        let (limit, offset) = limitOffset(r)
        var issues = try issueReads.issues(projectID: project.id, limit: limit, offset: offset)
        // Sentry's `?query=is:unresolved` (what sentry-cli lists) and `?status=`.
        let wanted = r.query["status"] ?? (r.query["query"] ?? "").split(separator: " ").first { $0.hasPrefix("is:") }.map { String($0.dropFirst(3)) }
        if let lifecycle, let wanted, let status = IssueStatus(sentry: wanted) {
            issues = try issues.filter { try lifecycle.state(issueID: $0.id).status == status }
        }
        return .json(.array(try issues.map { try issueJSON($0, withStack: false, project: project) }))
    }

    /// The issues Sentry's search in the request matches (`IssueSearchRequest`), a keyset page at
    /// a time with the next page in a `Link` header, as sentry-cli follows it.
    private func issues(_ r: HTTPRequest, project: ProjectRecord, database: any SQLDatabase) throws -> HTTPResponse {
        var q: IssueQuery
        do { q = try IssueSearchRequest.query(r) } catch let refused as IssueSearchRequest.Refused { return refused.response }
        let page: KeysetPage
        switch KeysetPage.of(r) {
        case .failure(let e): return e.response
        case .success(let p): page = p
        }
        if let cursor = page.cursor {
            guard let after = IssueSearchRequest.position(cursor) else { return KeysetPage.KeysetError().response }
            q.after = after
        }
        q.limit = page.limit + 1  // one more: whether a next page exists
        let heads = try IssueSearchRequest.heads(database, projectID: project.id, q)
        let shown = heads.prefix(page.limit)
        let issues = try shown.compactMap { try store.issue(id: $0.id) }
        let next = heads.count > page.limit ? shown.last.map { IssueSearchRequest.cursor(value: $0.value, id: $0.id) } : nil
        return KeysetPage.response(try issues.map { try issueJSON($0, withStack: false, project: project) }, next: next, request: r)
    }

    func event(org: String, project slug: String, eventID: String) throws -> HTTPResponse {
        guard let project = try store.project(idOrSlug: slug) else { return .detail(404, "no project '\(slug)'") }
        guard let id = EnvelopeDecoder.normalisedEventID(eventID), let o = try store.occurrence(projectID: project.id, eventID: id) else {
            return .detail(404, "no such event")
        }
        var j = occurrenceJSON(o)
        let event = try StoredEvent.decodeForReading(o)
        let pending = reads.settle(EventRenderer.lookups(of: event))
        j["event"] = EventRenderer.render(event, symbolicator: symbolicator, pending: pending)
        j["symbolication"] = EventRenderer.status(pending)
        j["trace"] = TraceAPI.link(event: event, org: org, project: project.slug)  // Traces/
        if let attachments {  // Attachments/
            let list = try attachments.attachments(occurrenceID: o.id)
            j["attachments"] = .array(list.map { AttachmentAPI.json($0, org: org, project: project.slug, eventID: o.eventID) })
        }
        return .json(j)
    }

    func issue(_ idText: String) throws -> HTTPResponse {
        guard let id = Int64(idText), let issue = try store.issue(id: id) else { return .detail(404, "no such issue") }
        var j = try issueJSON(issue, withStack: true)
        if issue.id != id { j["merged_from"] = .string(String(id)) }
        return .json(j)
    }

    /// An issue's events, newest first, in keyset pages of `limit` with the next one in a `Link`
    /// (as Sentry pages this list): the cursor is the last event's position, so events arriving
    /// meanwhile shift nothing and a late page costs what the first does. Without a cursor,
    /// `offset` is read too.
    func occurrences(_ r: HTTPRequest, issue idText: String) throws -> HTTPResponse {
        let (limit, offset) = limitOffset(r)
        let page: KeysetPage
        switch KeysetPage.of(r) {
        case .success(let p): page = p
        case .failure(let e): return e.response
        }
        guard let id = Int64(idText), let issue = try store.issue(id: id) else { return .detail(404, "no such issue") }
        let read: [StoredOccurrence]
        if let cursor = page.cursor {
            guard let before = Int64(cursor), before > 0 else { return KeysetPage.KeysetError().response }
            read = try issueReads.occurrences(issueID: issue.id, before: before, limit: limit + 1)
        } else {
            read = try issueReads.occurrences(issueID: issue.id, limit: limit + 1, offset: offset)
        }
        let shown = read.prefix(limit)
        let next = read.count > limit ? shown.last.map { String($0.id) } : nil
        return KeysetPage.response(shown.map(occurrenceJSON), next: next, request: r)
    }

    func debugFiles() throws -> HTTPResponse {
        .json(
            .array(
                try records.debugFiles().map { d -> JSONValue in
                    [
                        "build_id": .string(d.buildID.hex), "debug_id": .string(d.buildID.debugID.description), "name": .string(d.name),
                        "has_debug_info": .bool(d.hasDebugInfo), "has_symbols": .bool(d.hasSymbols), "is_executable": .bool(d.isExecutable),
                        "size": .int(d.size), "uploaded": .double(d.uploaded)
                    ]
                }))
    }

    func backfills(_ r: HTTPRequest) throws -> HTTPResponse {
        let (limit, _) = limitOffset(r)
        return .json(
            .array(
                try jobs.backfills(limit: limit).map { b -> JSONValue in
                    [
                        "id": .string(String(b.id)), "build_id": .string(b.buildID.hex), "state": .string(b.state), "stacks": .int(b.stacks),
                        "occurrences": .int(b.occurrences), "occurrences_done": .int(b.occurrencesDone),
                        "addresses_symbolicated": .int(b.addressesSymbolicated), "issues_merged": .int(b.issuesMerged),
                        "occurrences_symbolicated": .int(b.occurrencesSymbolicated),
                        "merges": .array(b.merges.map { ["issue": .string(String($0.issue)), "into": .string(String($0.into))] }),
                        "error": b.error.map { .string($0) } ?? .null,
                        "started": .double(b.started), "finished": b.finished.map { .double($0) } ?? .null,
                        "seconds": b.finished.map { .double($0 - b.started) } ?? .null
                    ]
                }))
    }
}
