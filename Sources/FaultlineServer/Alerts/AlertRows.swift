// Alert rules, the delivery queue, each rule's memory of an issue and the evaluator's cursor, as
// rows (both dialects, `SQLSession`).
import Foundation
import FaultlineProtocol

/// One alert waiting to go out, or gone: the durable queue row.
public struct AlertDelivery: Sendable {
    public enum State: String, Sendable { case pending, sent, failed }
    public var id: Int64
    public var ruleID: Int64
    public var issueID: Int64?
    public var kind: AlertKind
    /// The generic payload as enqueued (AlertMessage); channels render it when sending.
    public var payload: JSONValue
    public var state: State
    public var attempts: Int64
    public var nextAttempt: Double
    public var lastError: String?
    public var created: Double
    public var sent: Double?
    /// What the alert says, in one line (its mail's subject).
    public var headline: String { AlertMessage.headline(payload) }
}

enum AlertRows {
    static let ruleColumns = "id, project_id, channel, target, triggers, environment, level, release, created"

    static func rule(_ r: any SQLRow) -> AlertRule? {
        guard let channel = AlertChannel(rawValue: r.text(2) ?? "") else { return nil }
        let triggers = (r.text(4) ?? "").split(separator: ",").compactMap { AlertTrigger(spelling: String($0)) }
        return AlertRule(
            id: r.int(0), projectID: r.int(1), channel: channel, target: r.text(3) ?? "", triggers: triggers,
            environment: r.text(5), level: r.text(6), release: r.text(7), created: r.double(8))
    }

    static func insert(_ c: any SQLSession, _ rule: AlertRule, now: Double) throws -> Int64 {
        try c.first(
            """
            INSERT INTO alert_rules(project_id, channel, target, triggers, environment, level, release, created)
            VALUES(?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, .int(rule.projectID), .text(rule.channel.rawValue), .text(rule.target), .text(rule.triggers.map(\.spelling).joined(separator: ",")),
            rule.environment.map(SQLValue.text) ?? .null, rule.level.map(SQLValue.text) ?? .null, rule.release.map(SQLValue.text) ?? .null,
            .double(now)
        ) { $0.int(0) } ?? 0
    }

    static func rules(_ c: any SQLSession, projectID: Int64? = nil) throws -> [AlertRule] {
        try c.rows(
            "SELECT \(ruleColumns) FROM alert_rules WHERE CAST(? AS BIGINT) IS NULL OR project_id = ? ORDER BY id",
            [projectID.map(SQLValue.int) ?? .null, projectID.map(SQLValue.int) ?? .null], rule
        ).compactMap { $0 }
    }

    static func rule(_ c: any SQLSession, id: Int64) throws -> AlertRule? {
        try c.first("SELECT \(ruleColumns) FROM alert_rules WHERE id = ?", .int(id), map: rule) ?? nil
    }

    static func delete(_ c: any SQLSession, ruleID: Int64) throws -> Bool {
        let n = try c.execute("DELETE FROM alert_rules WHERE id = ?", .int(ruleID))
        try c.execute("DELETE FROM alert_memory WHERE rule_id = ?", .int(ruleID))
        try c.execute("UPDATE alert_deliveries SET state = 'failed', last_error = 'rule removed' WHERE rule_id = ? AND state = 'pending'", .int(ruleID))
        return n > 0
    }

    // MARK: Deliveries

    static let deliveryColumns = "id, rule_id, issue_id, kind, payload, state, attempts, next_attempt, last_error, created, sent"

    static func delivery(_ r: any SQLRow) -> AlertDelivery {
        AlertDelivery(
            id: r.int(0), ruleID: r.int(1), issueID: r.isNull(2) ? nil : r.int(2), kind: AlertKind(rawValue: r.text(3) ?? "") ?? .test,
            payload: (try? JSONValue.parse(Data((r.text(4) ?? "{}").utf8))) ?? .object([:]),
            state: AlertDelivery.State(rawValue: r.text(5) ?? "") ?? .pending, attempts: r.int(6), nextAttempt: r.double(7),
            lastError: r.text(8), created: r.double(9), sent: r.isNull(10) ? nil : r.double(10))
    }

    @discardableResult
    static func enqueue(_ c: any SQLSession, ruleID: Int64, issueID: Int64?, kind: AlertKind, payload: JSONValue, now: Double) throws -> Int64 {
        try c.first(
            """
            INSERT INTO alert_deliveries(rule_id, issue_id, kind, payload, state, next_attempt, created) VALUES(?, ?, ?, ?, 'pending', ?, ?) RETURNING id
            """, .int(ruleID), issueID.map(SQLValue.int) ?? .null, .text(kind.rawValue), .text(payload.jsonString), .double(now), .double(now)
        ) { $0.int(0) } ?? 0
    }

    static func deliveries(_ c: any SQLSession, projectID: Int64?, limit: Int) throws -> [AlertDelivery] {
        try c.rows(
            """
            SELECT \(deliveryColumns.split(separator: ",").map { "d." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            FROM alert_deliveries d JOIN alert_rules r ON r.id = d.rule_id
            WHERE CAST(? AS BIGINT) IS NULL OR r.project_id = ? ORDER BY d.id DESC LIMIT ?
            """, [projectID.map(SQLValue.int) ?? .null, projectID.map(SQLValue.int) ?? .null, .int(Int64(limit))], delivery)
    }

    static func delivery(_ c: any SQLSession, id: Int64) throws -> AlertDelivery? {
        try c.first("SELECT \(deliveryColumns) FROM alert_deliveries WHERE id = ?", .int(id), map: delivery)
    }

    /// Takes up to `limit` due deliveries for `holder` for `lease` seconds: a delivery is sent by
    /// one node at a time, and one whose sender died is taken again when its lease runs out.
    /// Due deliveries, oldest first, at most one per rule and none of the rules in `busy` (a rule
    /// with a send in flight: its deliveries wait for it, other rules' do not).
    static func lease(_ c: any SQLSession, holder: String, now: Double, lease: Double, limit: Int, excludingRules busy: Set<Int64> = []) throws
        -> [AlertDelivery]
    {
        // Each rule's oldest due delivery, oldest first: however long one rule's backlog is (a
        // receiver that hangs), the other rules' deliveries are among the candidates.
        let candidates = try c.rows(
            """
            SELECT min(id), rule_id FROM alert_deliveries WHERE state = 'pending' AND next_attempt <= ?
              AND (lease_expires IS NULL OR lease_expires < ?) GROUP BY rule_id ORDER BY 1 LIMIT ?
            """, [.double(now), .double(now), .int(Int64(limit + busy.count))]
        ) { ($0.int(0), $0.int(1)) }
        let due = candidates.filter { !busy.contains($0.1) }.prefix(limit).map(\.0)
        var taken: [AlertDelivery] = []
        for id in due {
            let n = try c.execute(
                """
                UPDATE alert_deliveries SET holder = ?, lease_expires = ? WHERE id = ? AND state = 'pending'
                  AND (lease_expires IS NULL OR lease_expires < ?)
                """, .text(holder), .double(now + lease), .int(id), .double(now))
            if n == 1, let d = try delivery(c, id: id) { taken.append(d) }
        }
        return taken
    }

    static func markSent(_ c: any SQLSession, id: Int64, now: Double) throws {
        try c.execute(
            "UPDATE alert_deliveries SET state = 'sent', sent = ?, attempts = attempts + 1, last_error = NULL, holder = NULL, lease_expires = NULL WHERE id = ?",
            .double(now), .int(id))
    }

    static func markFailed(_ c: any SQLSession, id: Int64, error: String, retryAt: Double?) throws {
        try c.execute(
            """
            UPDATE alert_deliveries SET attempts = attempts + 1, last_error = ?, state = ?, next_attempt = coalesce(CAST(? AS DOUBLE PRECISION), next_attempt),
              holder = NULL, lease_expires = NULL WHERE id = ?
            """, .text(String(error.prefix(500))), .text(retryAt == nil ? "failed" : "pending"), retryAt.map(SQLValue.double) ?? .null, .int(id))
    }

    /// Puts a leased delivery back untouched, to go at `at` (the per-rule rate limit).
    static func postpone(_ c: any SQLSession, id: Int64, until at: Double) throws {
        try c.execute("UPDATE alert_deliveries SET next_attempt = ?, holder = NULL, lease_expires = NULL WHERE id = ?", .double(at), .int(id))
    }

    static func sentRecently(_ c: any SQLSession, ruleID: Int64, since: Double) throws -> Int64 {
        try c.first("SELECT count(*) FROM alert_deliveries WHERE rule_id = ? AND state = 'sent' AND sent >= ?", .int(ruleID), .double(since)) { $0.int(0) } ?? 0
    }

    // MARK: Memory and cursor

    struct Memory { var lastSent: Double; var suppressed: Int64; var symbolicated: Bool }

    static func memory(_ c: any SQLSession, ruleID: Int64, issueID: Int64, kind: AlertKind) throws -> Memory? {
        try c.first(
            "SELECT last_sent, suppressed, symbolicated FROM alert_memory WHERE rule_id = ? AND issue_id = ? AND kind = ?",
            .int(ruleID), .int(issueID), .text(kind.rawValue)
        ) { Memory(lastSent: $0.double(0), suppressed: $0.int(1), symbolicated: $0.int(2) != 0) }
    }

    static func remember(_ c: any SQLSession, ruleID: Int64, issueID: Int64, kind: AlertKind, sentAt: Double, symbolicated: Bool) throws {
        try c.execute(
            """
            INSERT INTO alert_memory(rule_id, issue_id, kind, last_sent, suppressed, symbolicated) VALUES(?, ?, ?, ?, 0, ?)
            ON CONFLICT(rule_id, issue_id, kind) DO UPDATE SET last_sent = excluded.last_sent, suppressed = 0
            """, .int(ruleID), .int(issueID), .text(kind.rawValue), .double(sentAt), .int(symbolicated ? 1 : 0))
    }

    static func suppress(_ c: any SQLSession, ruleID: Int64, issueID: Int64, kind: AlertKind, count: Int64) throws {
        try c.execute(
            "UPDATE alert_memory SET suppressed = suppressed + ? WHERE rule_id = ? AND issue_id = ? AND kind = ?",
            .int(count), .int(ruleID), .int(issueID), .text(kind.rawValue))
    }

    static func cursor(_ c: any SQLSession) throws -> Int64? {
        try c.first("SELECT value FROM alert_cursor WHERE name = 'occurrences'") { $0.int(0) }
    }

    /// Moves the cursor from `expecting` (nil: it does not exist yet) to `value`; throws when
    /// another evaluator moved it meanwhile, so the caller's transaction rolls back.
    static func setCursor(_ c: any SQLSession, _ value: Int64, expecting: Int64?) throws {
        let changed: Int
        if let old = expecting {
            changed = try c.execute("UPDATE alert_cursor SET value = ? WHERE name = 'occurrences' AND value = ?", .int(value), .int(old))
        } else {
            changed = try c.execute("INSERT INTO alert_cursor(name, value) VALUES('occurrences', ?) ON CONFLICT(name) DO NOTHING", .int(value))
        }
        guard changed == 1 else { throw CursorMoved() }
    }

    struct CursorMoved: Error, CustomStringConvertible {
        var description: String { "another server evaluated these occurrences meanwhile; this round is undone" }
    }
}
