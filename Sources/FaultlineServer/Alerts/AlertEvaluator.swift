// Decides what to tell: reads occurrences once grouping has placed them (in id order, behind a
// cursor kept in the store), applies the lifecycle (a resolved issue that occurs again regresses;
// an ignored one whose count ran out comes back), and enqueues deliveries for the rules that
// match — all in one transaction per batch, so a crash neither loses nor repeats an alert. One
// node evaluates at a time (the "alerting" claim), so with several nodes each alert is enqueued
// once.
//
// Flood control: after a rule alerts about an issue, further occurrences of it are counted, not
// sent; once `digestInterval` has passed they go out as one digest. A crash storm of one issue is
// one alert and then one digest per interval, never one mail per crash.
import FaultlineProtocol
import FaultlineThreads
import Foundation

final class AlertEvaluator: @unchecked Sendable {
    let store: any Store
    let database: any SQLDatabase
    let publicURL: String?
    let digestInterval: Double
    let batchSize = 1000
    /// Called after a batch enqueued something (wakes the dispatcher).
    var onEnqueued: @Sendable () -> Void = {}
    private let worker = WorkerThread(name: "faultline-alert-evaluator", state: ())
    /// Crash-free rates are computed from session items at most this often (they scan a window).
    var crashFreeCheckInterval: Double = 30
    /// A release needs this many sessions in the window before its crash-free rate can alert.
    static let minimumSessions: Int64 = 10
    /// Session items read per project and check, newest first.
    static let sessionScanLimit = 50_000
    private var lastCrashFreeCheck: Double = 0
    /// This round's per-project, per-window tallies (worker thread only).
    private var crashFreeTallies: [String: [String: SessionTally]]?
    /// How long a gap in the occurrence ids is waited for (an ingest transaction still open).
    var gapSettleSeconds: Double = 10
    private var claimDuration: Double { max(30, interval * 10) }
    private let holder = "\(UUID().uuidString):\(ProcessInfo.processInfo.processIdentifier):alerting"
    private let interval: Double

    init(store: any Store, database: any SQLDatabase, publicURL: String?, digestInterval: Double, interval: Double = 1) {
        self.store = store; self.database = database; self.publicURL = publicURL
        self.digestInterval = digestInterval; self.interval = interval
    }

    func start() {
        var due = Date()
        worker.start { [unowned self] _, stopping in
            if stopping { return .exit }
            if Date() < due { return .wait(until: due) }
            due = Date().addingTimeInterval(interval)
            return .run { [unowned self] in tick() }
        }
    }

    func stop() {
        _ = worker.stop()
        _ = try? store.releaseClaim("alerting", holder: holder)
    }

    /// One round: every ready batch, then (with `periodic`) the digests and "now symbolicated"
    /// alerts that are due, and ignores whose time ran out. Runs only while this node holds the claim.
    func tick(periodic runPeriodic: Bool = true) {
        do {
            guard try store.acquireClaim("alerting", holder: holder, duration: claimDuration) else { return }
            var enqueued = 0
            while !worker.isStopping {
                // Held for the whole round: a long backlog must not outlive the claim.
                guard try store.renewClaim("alerting", holder: holder, duration: claimDuration) else { break }
                let (n, more) = try evaluateBatch()
                enqueued += n
                if !more { break }
            }
            if runPeriodic {
                let now = Date().timeIntervalSince1970
                // Session tallies are read outside the write transaction (they scan a window).
                crashFreeTallies = nil
                if now - lastCrashFreeCheck >= crashFreeCheckInterval {
                    lastCrashFreeCheck = now
                    crashFreeTallies = try crashFreeTallies(now: now)
                }
                enqueued += try database.writing { [self] c in try periodic(c, now: now) }
            }
            if enqueued > 0 { onEnqueued() }
        } catch {
            FileHandle.standardError.write(Data("faultline: alert evaluation failed, will retry: \(error)\n".utf8))
        }
    }

    private struct ProjectRelease: Hashable {
        var projectID: Int64
        var release: String
    }

    private struct Seen {
        var projectID: Int64
        var issueID: Int64
        var occurrences: [(id: Int64, received: Double, release: String?)]
    }

    /// Evaluates the next batch of grouped occurrences; returns how many deliveries it enqueued and
    /// whether more are waiting.
    func evaluateBatch() throws -> (Int, Bool) {
        let now = Date().timeIntervalSince1970
        let rules = try database.reading { try AlertRows.rules($0) }
        return try database.writing { [self] c in
            // Behind the cursor, and never past an occurrence grouping has not placed yet: ids are
            // assigned at ingest, grouping may finish them out of order.
            let stored = try AlertRows.cursor(c)
            let firstWaiting = try c.first("SELECT min(id) FROM occurrences WHERE processed = 0") { $0.isNull(0) ? Int64.max : $0.int(0) } ?? Int64.max
            let start =
                try stored
                ?? min(try c.first("SELECT coalesce(max(id), 0) FROM occurrences WHERE processed = 1") { $0.int(0) } ?? 0, firstWaiting - 1)
            let rows = try c.rows(
                """
                SELECT id, project_id, issue_id, received, release FROM occurrences
                WHERE id > ? AND id < ? AND processed = 1 ORDER BY id LIMIT ?
                """, [.int(start), .int(firstWaiting), .int(Int64(batchSize))]
            ) { ($0.int(0), $0.int(1), $0.isNull(2) ? nil : $0.int(2), $0.double(3), $0.text(4)) }
            // A gap in the ids may be an ingest transaction that has not committed yet (PostgreSQL
            // hands ids out before commit; SQLite has one writer and none): stop before a young gap
            // and look again next round. Old gaps are deletions, duplicates or rollbacks.
            var taken: [(Int64, Int64, Int64?, Double, String?)] = []
            var expected = start + 1
            for row in rows {
                if row.0 != expected && now - row.3 < gapSettleSeconds { break }
                taken.append(row)
                expected = row.0 + 1
            }
            guard let last = taken.last?.0 else {
                if stored == nil { try AlertRows.setCursor(c, start, expecting: nil) }
                return (0, false)
            }
            var byIssue: [Int64: Seen] = [:]
            var order: [Int64] = []
            var noted = Set<ProjectRelease>()
            var activity: [ReleaseActivity.Key: ReleaseActivity.Tally] = [:]
            for (id, project, issue, received, release) in taken {
                if let release {
                    let key = ReleaseActivity.Key(projectID: project, version: release)
                    var t = activity[key] ?? ReleaseActivity.Tally(firstEvent: received, lastEvent: received)
                    t.firstEvent = min(t.firstEvent, received)
                    t.lastEvent = max(t.lastEvent, received)
                    activity[key] = t
                }
                // First heard of at its first occurrence's own time, so two releases first seen in
                // one batch keep the order their events came in. Once per release and batch: the
                // later occurrences' notes would change nothing.
                if let release, noted.insert(ProjectRelease(projectID: project, release: release)).inserted {
                    try ReleaseOrder.note(c, projectID: project, version: release, now: received)
                }
                guard let issue else { continue }
                if byIssue[issue] == nil {
                    order.append(issue)
                    byIssue[issue] = Seen(projectID: project, issueID: issue, occurrences: [])
                }
                byIssue[issue]?.occurrences.append((id, received, release))
            }
            var enqueued = 0
            for issueID in order {
                guard let seen = byIssue[issueID] else { continue }
                enqueued += try evaluate(c, seen, rules: rules.filter { $0.projectID == seen.projectID }, now: now, activity: &activity)
            }
            try ReleaseActivity.record(c, activity, dialect: database.dialect)
            // Conditional: if another node moved the cursor meanwhile (its claim overlapped ours),
            // this transaction rolls back instead of queueing the same alerts twice.
            try AlertRows.setCursor(c, last, expecting: stored)
            return (enqueued, taken.count == rows.count && rows.count == batchSize)
        }
    }

    /// One issue's new occurrences in this batch; a new issue is counted for the release of its
    /// first occurrence in `activity`.
    private func evaluate(
        _ c: any SQLSession, _ seen: Seen, rules: [AlertRule], now: Double, activity: inout [ReleaseActivity.Key: ReleaseActivity.Tally]
    ) throws -> Int {
        // The issue's rows and those of the issues merged into it: an issue merged into this one
        // earlier is not new when its fingerprint comes back. (An id merged since these rows were
        // grouped has no members of its own: not new either.)
        let members = try IssueGroups.membership(c, "issue_id", issue: seen.issueID)
        let first = try c.rows("SELECT min(id) FROM occurrences WHERE \(members.sql)", members.args) { $0.int(0) }.first
        let firstHere = first.flatMap { id in seen.occurrences.first { $0.id == id } }
        let isNew = firstHere != nil
        if let release = firstHere?.release {
            activity[ReleaseActivity.Key(projectID: seen.projectID, version: release)]?.newGroups += 1
        }
        let transition = try IssueLifecycle.occurred(
            c, issueID: seen.issueID, projectID: seen.projectID, occurrences: seen.occurrences.map { ($0.release, $0.received) }, now: now)
        guard !rules.isEmpty, let issue = try store.issue(id: seen.issueID), let project = try Self.project(store, id: seen.projectID) else { return 0 }
        let liveMembers = issue.id == seen.issueID ? members : try IssueGroups.membership(c, "issue_id", issue: issue.id)
        // Resolved or ignored (after these events, which may have brought it back): muting an
        // issue is how people stop hearing of it, so no frequency alert and no digest.
        if transition == nil, try IssueLifecycle.state(c, issueID: issue.id).status != .unresolved { return 0 }
        var enqueued = 0
        for rule in rules {
            let matching = try seen.occurrences.filter { try matches(c, rule, occurrenceID: $0.id, release: $0.release) }
            guard let latest = matching.last else { continue }
            var kinds: [(AlertKind, [String: JSONValue])] = []
            if isNew && rule.triggers.contains(.newIssue) { kinds.append((.newIssue, [:])) }
            if let (t, _) = transition, rule.triggers.contains(.regression) { kinds.append((t == .regression ? .regression : .unmuted, [:])) }
            for case .frequency(let n, let minutes) in rule.triggers {
                let count = try matchingCount(c, rule, members: liveMembers, since: now - Double(minutes) * 60, enough: Int64(n))
                if count >= n,
                    (try AlertRows.memory(c, ruleID: rule.id, issueID: issue.id, kind: .frequency)).map({ now - $0.lastSent >= Double(minutes) * 60 }) ?? true
                {
                    kinds.append((.frequency, ["frequency": ["count": .int(Int64(n)), "minutes": .int(Int64(minutes)), "seen": .int(count)]]))
                }
            }
            if kinds.isEmpty {
                // Already told about this issue recently: count it for the digest.
                try AlertRows.suppress(c, ruleID: rule.id, issueID: issue.id, kind: .digest, count: Int64(matching.count))
                continue
            }
            for (kind, extra) in kinds {
                let payload = AlertMessage.payload(
                    kind: kind, rule: rule, project: project, issue: issue, release: latest.release,
                    extra: extra, publicURL: publicURL, now: now)
                try AlertRows.enqueue(c, ruleID: rule.id, issueID: issue.id, kind: kind, payload: payload, now: now)
                try AlertRows.remember(c, ruleID: rule.id, issueID: issue.id, kind: kind, sentAt: now, symbolicated: issue.symbolicated)
                enqueued += 1
            }
            // The digest's clock starts at the alert; what came with it in this batch is in it.
            try AlertRows.remember(c, ruleID: rule.id, issueID: issue.id, kind: .digest, sentAt: now, symbolicated: issue.symbolicated)
        }
        return enqueued
    }

    /// The issue's occurrences received since `since` that pass the rule's filters: release and
    /// environment are columns; the level is only in the event, so with a level filter the events
    /// are read, newest first, until `enough` match.
    private func matchingCount(
        _ c: any SQLSession, _ rule: AlertRule, members: (sql: String, args: [SQLValue]), since: Double, enough: Int64
    ) throws -> Int64 {
        var sql = "FROM occurrences WHERE \(members.sql) AND received >= ?"
        var args = members.args + [.double(since)]
        if let r = rule.release { sql += " AND release = ?"; args.append(.text(r)) }
        if let e = rule.environment { sql += " AND environment = ?"; args.append(.text(e)) }
        guard rule.level != nil else { return try c.rows("SELECT count(*) " + sql, args) { $0.int(0) }.first ?? 0 }
        var count: Int64 = 0
        for id in try c.rows("SELECT id " + sql + " ORDER BY id DESC", args, { $0.int(0) }) {
            if try matches(c, rule, occurrenceID: id, release: rule.release) { count += 1 }
            if count >= enough { break }
        }
        return count
    }

    /// A rule's filters against one occurrence (its event is read only when a filter needs it).
    private func matches(_ c: any SQLSession, _ rule: AlertRule, occurrenceID: Int64, release: String?) throws -> Bool {
        if let r = rule.release, r != release { return false }
        guard rule.needsEventFields else { return true }
        guard let stored = try store.occurrence(id: occurrenceID), let event = try? StoredEvent.decode(stored.compressedEvent) else { return false }
        if let e = rule.environment, EventFields.environment(event) != e { return false }
        if let l = rule.level, (event["level"]?.stringValue ?? "error") != l { return false }
        return true
    }

    /// Digests that are due, "now symbolicated" alerts, and ignores whose time ran out.
    private func periodic(_ c: any SQLSession, now: Double) throws -> Int {
        var enqueued = 0
        let rules = Dictionary(uniqueKeysWithValues: try AlertRows.rules(c).map { ($0.id, $0) })
        let digests = try c.rows(
            """
            SELECT rule_id, issue_id, suppressed FROM alert_memory WHERE kind = 'digest' AND suppressed > 0 AND last_sent <= ?
            """, [.double(now - digestInterval)]
        ) { ($0.int(0), $0.int(1), $0.int(2)) }
        for (ruleID, issueID, count) in digests {
            guard let rule = rules[ruleID], let issue = try store.issue(id: issueID), let project = try Self.project(store, id: rule.projectID) else {
                continue
            }
            // Muted since those events came: the digest is dropped with the rest of its noise.
            if try IssueLifecycle.state(c, issueID: issue.id).status != .unresolved {
                try AlertRows.remember(c, ruleID: ruleID, issueID: issueID, kind: .digest, sentAt: now, symbolicated: issue.symbolicated)
                continue
            }
            let payload = AlertMessage.payload(
                kind: .digest, rule: rule, project: project, issue: issue, release: nil,
                extra: ["digest": ["events": .int(count), "since": .string(SentryTimestamp.rfc3339(now - digestInterval))]],
                publicURL: publicURL, now: now)
            try AlertRows.enqueue(c, ruleID: ruleID, issueID: issue.id, kind: .digest, payload: payload, now: now)
            try AlertRows.remember(c, ruleID: ruleID, issueID: issueID, kind: .digest, sentAt: now, symbolicated: issue.symbolicated)
            enqueued += 1
        }
        // Issues alerted about unsymbolicated that a late debug file has named (or merged).
        let named = try c.rows(
            """
            SELECT m.rule_id, m.issue_id FROM alert_memory m JOIN issues i ON i.id = m.issue_id
            LEFT JOIN issues t ON t.id = i.merged_into
            WHERE m.kind = 'digest' AND m.symbolicated = 0 AND coalesce(t.symbolicated, i.symbolicated) = 1
            """, []
        ) { ($0.int(0), $0.int(1)) }
        for (ruleID, issueID) in named {
            try c.execute("UPDATE alert_memory SET symbolicated = 1 WHERE rule_id = ? AND issue_id = ?", .int(ruleID), .int(issueID))
            guard let rule = rules[ruleID], rule.triggers.contains(.symbolicated), let issue = try store.issue(id: issueID),
                let project = try Self.project(store, id: rule.projectID)
            else { continue }
            let previous =
                try c.first(
                    "SELECT payload FROM alert_deliveries WHERE rule_id = ? AND issue_id = ? ORDER BY id LIMIT 1",
                    .int(ruleID), .int(issueID)
                ) { $0.text(0) } ?? nil
            let before = previous.flatMap { try? JSONValue.parse(Data($0.utf8)) }?["issue"]?["title"]?.stringValue
            let payload = AlertMessage.payload(
                kind: .symbolicated, rule: rule, project: project, issue: issue, release: nil,
                extra: before.map { ["previous_title": .string($0)] } ?? [:], publicURL: publicURL, now: now)
            try AlertRows.enqueue(c, ruleID: ruleID, issueID: issue.id, kind: .symbolicated, payload: payload, now: now)
            enqueued += 1
        }
        if let tallies = crashFreeTallies {
            enqueued += try crashFree(c, rules: Array(rules.values), tallies: tallies, now: now)
        }
        for (issueID, projectID) in try IssueLifecycle.expireIgnores(c, now: now) {
            guard let issue = try store.issue(id: issueID), let project = try Self.project(store, id: projectID) else { continue }
            // No event came with the expiry: a rule's filters are tried on the issue's latest one,
            // as they are tried on the event that ends an "until N more events" ignore.
            let latest = try c.first("SELECT id, release FROM occurrences WHERE issue_id = ? ORDER BY id DESC LIMIT 1", .int(issueID)) {
                ($0.int(0), $0.text(1))
            }
            for rule in rules.values where rule.projectID == projectID && rule.triggers.contains(.regression) {
                guard let (occurrenceID, release) = latest, try matches(c, rule, occurrenceID: occurrenceID, release: release) else { continue }
                let payload = AlertMessage.payload(kind: .unmuted, rule: rule, project: project, issue: issue, release: nil, publicURL: publicURL, now: now)
                try AlertRows.enqueue(c, ruleID: rule.id, issueID: issueID, kind: .unmuted, payload: payload, now: now)
                enqueued += 1
            }
        }
        return enqueued
    }

    /// The key of one (project, window) tally.
    static func tallyKey(_ projectID: Int64, _ minutes: Int) -> String { "\(projectID)/\(minutes)" }

    /// Session tallies per release for every (project, window) a crash-free rule asks about, read
    /// in one read transaction.
    private func crashFreeTallies(now: Double) throws -> [String: [String: SessionTally]] {
        let rules = try database.reading { try AlertRows.rules($0) }
        var out: [String: [String: SessionTally]] = [:]
        let dialect = database.dialect
        try database.reading { c in
            for rule in rules {
                for case .crashFree(_, let minutes) in rule.triggers where out[Self.tallyKey(rule.projectID, minutes)] == nil {
                    out[Self.tallyKey(rule.projectID, minutes)] = try ReleaseHealth.byRelease(
                        c, dialect: dialect, projectID: rule.projectID, since: now - Double(minutes) * 60, limit: Self.sessionScanLimit)
                }
            }
        }
        return out
    }

    /// Releases whose crash-free session rate over a rule's window is below its threshold: one
    /// alert per rule and release per window.
    private func crashFree(_ c: any SQLSession, rules: [AlertRule], tallies: [String: [String: SessionTally]], now: Double) throws -> Int {
        var enqueued = 0
        for rule in rules {
            for case .crashFree(let percent, let minutes) in rule.triggers {
                guard let project = try Self.project(store, id: rule.projectID), let tally = tallies[Self.tallyKey(rule.projectID, minutes)] else {
                    continue
                }
                let window = Double(minutes) * 60
                for (release, t) in tally.sorted(by: { $0.key < $1.key }) {
                    if let only = rule.release, only != release { continue }
                    guard t.started >= Self.minimumSessions, let rate = t.crashFreeRate, rate * 100 < percent else { continue }
                    let key = Self.releaseKey(release)
                    if let m = try AlertRows.memory(c, ruleID: rule.id, issueID: key, kind: .crashFree), now - m.lastSent < window { continue }
                    let payload = AlertMessage.payload(
                        kind: .crashFree, rule: rule, project: project, issue: nil, release: release,
                        extra: [
                            "release": .string(release),
                            "crash_free": [
                                "rate": .double(rate), "threshold_percent": .double(percent), "minutes": .int(Int64(minutes)),
                                "sessions": .int(t.started), "crashed": .int(t.crashed)
                            ]
                        ],
                        publicURL: publicURL, now: now)
                    try AlertRows.enqueue(c, ruleID: rule.id, issueID: nil, kind: .crashFree, payload: payload, now: now)
                    try AlertRows.remember(c, ruleID: rule.id, issueID: key, kind: .crashFree, sentAt: now, symbolicated: true)
                    enqueued += 1
                }
            }
        }
        return enqueued
    }

    /// The project with this id (never one whose slug happens to be those digits).
    static func project(_ store: any Store, id: Int64) throws -> ProjectRecord? {
        try store.projects().first { $0.id == id }
    }

    /// A release's key in the rules' memory (which is keyed by issue id): a 63-bit FNV-1a hash,
    /// negative so it never meets a real issue id.
    static func releaseKey(_ release: String) -> Int64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in release.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return -Int64(h >> 1) - 1
    }
}
