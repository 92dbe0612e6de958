// Alerts as a feature of the server: the evaluator (what to tell), the dispatcher (telling it),
// and the rules' API. Its tables share the core store's database (SQLDatabase, both back ends).
import FaultlineProtocol
import Foundation

/// How alerts go out (`faultline serve --smtp …`, docs/SERVER.md "Alerts").
public struct AlertConfiguration: Sendable {
    /// The SMTP relay for email rules; nil: email rules fail with that reason (and say so).
    public var smtp: SMTPSettings?
    /// After an alert about an issue, its further occurrences wait this long and go out as one digest.
    public var digestInterval: Double = 600
    /// At most this many alerts per rule per minute; more wait, none is dropped.
    public var perRulePerMinute: Int64 = 30
    /// How often the evaluator and the dispatcher look for work (seconds).
    public var pollInterval: Double = 1
    /// Seconds one send (connect and transfer) may take before it counts as failed and is retried.
    public var sendTimeout = 10

    public init() {}
}

public final class Alerts: @unchecked Sendable {
    let store: any Store
    let database: any SQLDatabase
    let evaluator: AlertEvaluator
    let dispatcher: AlertDispatcher

    init(
        store: any Store, issueReads: any IssueReads, database: any SQLDatabase, configuration: AlertConfiguration, symbolicator: FrameSymbolicating,
        publicURL: String?
    ) {
        self.store = store
        self.database = database
        evaluator = AlertEvaluator(
            store: store, database: database, publicURL: publicURL, digestInterval: configuration.digestInterval,
            interval: configuration.pollInterval)
        dispatcher = AlertDispatcher(
            database: database, smtp: configuration.smtp, perRulePerMinute: configuration.perRulePerMinute,
            sendTimeout: configuration.sendTimeout, interval: configuration.pollInterval
        ) { payload in
            Self.enrich(payload, store: store, issueReads: issueReads, symbolicator: symbolicator)
        }
        let dispatcher = self.dispatcher
        evaluator.onEnqueued = { dispatcher.wake() }
    }

    func start() {
        evaluator.start()
        dispatcher.start()
    }

    func stop() {
        evaluator.stop()
        dispatcher.stop()
    }

    /// The issue as it is at send time (a backfill may have named it since), with its top in-app
    /// frames from the latest occurrence.
    static func enrich(_ payload: JSONValue, store: any Store, issueReads: any IssueReads, symbolicator: FrameSymbolicating) -> JSONValue {
        guard var issueJSON = payload["issue"]?.objectValue, let id = issueJSON["id"]?.stringValue.flatMap(Int64.init),
            let issue = try? store.issue(id: id)
        else { return payload }
        issueJSON["title"] = .string(issue.title)
        issueJSON["culprit"] = .string(issue.culprit)
        issueJSON["count"] = .int(issue.count)
        issueJSON["symbolicated"] = .bool(issue.symbolicated)
        if let latest = try? issueReads.occurrences(issueID: issue.id, limit: 1, offset: 0).first, let event = try? StoredEvent.decode(latest.compressedEvent) {
            let frames = EventRenderer.stack(of: event, symbolicator: symbolicator).filter { $0["in_app"]?.boolValue == true }.prefix(5)
            issueJSON["top_frames"] = .array(
                frames.map { f in
                    var s = f["function"]?.stringValue ?? ((f["module"]?.stringValue).map { PathName.last($0) } ?? "?") + "+" + (f["offset"]?.stringValue ?? "")
                    if let file = f["filename"]?.stringValue { s += " (\(PathName.last(file))\(f["lineno"]?.int64Value.map { ":\($0)" } ?? ""))" }
                    return .string(s)
                })
        }
        var out = payload.objectValue ?? [:]
        out["issue"] = .object(issueJSON)
        return .object(out)
    }

    // MARK: API: /api/0/projects/<org>/<project>/alerts/…

    func api(_ r: HTTPRequest, project slug: String, path: [String]) -> HTTPResponse {
        do {
            guard let project = try store.project(idOrSlug: slug) else { return .detail(404, "no project '\(slug)'") }
            let admin = AlertAdministration(store: store, database: database)
            switch (r.method, path.first, path.count) {
            case ("GET", nil, _):
                return .json([
                    "rules": .array(try admin.rules(project: project).map(Self.ruleJSON)),
                    "deliveries": .array(try admin.deliveries(project: project, limit: 100).map(Self.deliveryJSON))
                ])
            case ("GET", "deliveries", 1):
                let limit = min(max(Int(r.query["limit"] ?? "") ?? 100, 1), 1000)
                return .json(.array(try admin.deliveries(project: project, limit: limit).map(Self.deliveryJSON)))
            case ("POST", nil, _):
                guard let body = try? JSONValue.parse(r.body) else { return .detail(400, "the body must be JSON") }
                guard let channel = body["channel"]?.stringValue.flatMap(AlertChannel.init(rawValue:)) else {
                    return .detail(400, "channel must be webhook, slack or email")
                }
                let on = body["on"]?.stringValue ?? (body["on"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ",") ?? "new-issue,regression")
                let rule = try admin.add(
                    project: project, channel: channel, target: body["target"]?.stringValue ?? "", on: on,
                    environment: body["environment"]?.stringValue, level: body["level"]?.stringValue, release: body["release"]?.stringValue)
                return .json(Self.ruleJSON(rule), status: 201)
            case ("POST", let idText?, 2) where path[1] == "test" || path[1] == "remove":
                guard let id = Int64(idText), let rule = try admin.rule(id: id), rule.projectID == project.id else {
                    return .detail(404, "no alert rule \(idText)")
                }
                if path[1] == "remove" {
                    _ = try admin.remove(ruleID: id)
                    return .json(["removed": .int(id)])
                }
                let delivery = try admin.test(ruleID: id)
                dispatcher.wake()
                return .json(["delivery": .int(delivery)], status: 202)
            default:
                return .detail(404, "no such endpoint: \(r.path)")
            }
        } catch let e as AlertRuleError {
            return .detail(400, e.description)
        } catch {
            return .detail(500, "\(error)")
        }
    }

    static func ruleJSON(_ rule: AlertRule) -> JSONValue {
        [
            "id": .int(rule.id), "channel": .string(rule.channel.rawValue), "target": .string(rule.target),
            "on": .array(rule.triggers.map { .string($0.spelling) }),
            "environment": rule.environment.map(JSONValue.string) ?? .null, "level": rule.level.map(JSONValue.string) ?? .null,
            "release": rule.release.map(JSONValue.string) ?? .null, "created": .string(SentryTimestamp.rfc3339(rule.created))
        ]
    }

    static func deliveryJSON(_ d: AlertDelivery) -> JSONValue {
        [
            "id": .int(d.id), "rule": .int(d.ruleID), "issue": d.issueID.map { .string(String($0)) } ?? .null, "kind": .string(d.kind.rawValue),
            "state": .string(d.state.rawValue), "attempts": .int(d.attempts), "last_error": d.lastError.map(JSONValue.string) ?? .null,
            "created": .string(SentryTimestamp.rfc3339(d.created)), "sent": d.sent.map { .string(SentryTimestamp.rfc3339($0)) } ?? .null,
            "headline": .string(AlertMessage.headline(d.payload))
        ]
    }
}

/// Rules and deliveries for the API, the pages and `faultline alerts` (which opens the database
/// directly, like `faultline projects`).
public struct AlertAdministration: Sendable {
    let store: any Store
    let database: any SQLDatabase

    init(store: any Store, database: any SQLDatabase) { self.store = store; self.database = database }
    public init(store: SQLiteStore) { self.init(store: store, database: store) }
    public init(store: PostgresStore) { self.init(store: store, database: store) }

    public func add(
        project: ProjectRecord, channel: AlertChannel, target: String, on: String,
        environment: String? = nil, level: String? = nil, release: String? = nil
    ) throws -> AlertRule {
        if let problem = AlertRule.validate(channel: channel, target: target) { throw problem }
        let triggers = try AlertTrigger.parseList(on).get()
        var rule = AlertRule(
            projectID: project.id, channel: channel, target: target, triggers: triggers,
            environment: environment, level: level, release: release, created: Date().timeIntervalSince1970)
        let now = rule.created
        rule.id = try database.writing { [rule] c in try AlertRows.insert(c, rule, now: now) }
        return rule
    }

    public func rules(project: ProjectRecord?) throws -> [AlertRule] { try database.reading { try AlertRows.rules($0, projectID: project?.id) } }
    public func rule(id: Int64) throws -> AlertRule? { try database.reading { try AlertRows.rule($0, id: id) } }
    public func remove(ruleID: Int64) throws -> Bool { try database.writing { try AlertRows.delete($0, ruleID: ruleID) } }
    public func deliveries(project: ProjectRecord?, limit: Int) throws -> [AlertDelivery] {
        try database.reading { try AlertRows.deliveries($0, projectID: project?.id, limit: limit) }
    }

    /// Queues a test alert for the rule; a running server sends it within its poll interval.
    public func test(ruleID: Int64) throws -> Int64 {
        guard let rule = try rule(id: ruleID), let project = try AlertEvaluator.project(store, id: rule.projectID) else {
            throw AlertRuleError.badTarget("no alert rule \(ruleID)")
        }
        let now = Date().timeIntervalSince1970
        let payload = AlertMessage.payload(kind: .test, rule: rule, project: project, issue: nil, release: nil, publicURL: nil, now: now)
        return try database.writing { c in try AlertRows.enqueue(c, ruleID: ruleID, issueID: nil, kind: .test, payload: payload, now: now) }
    }
}
