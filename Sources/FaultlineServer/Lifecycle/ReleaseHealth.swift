// Sessions started and crashed per release and environment, from the `session` and `sessions`
// items SDKs send: the one tally behind the release-health page and the crash-free alert.
import Foundation
import FaultlineProtocol

struct SessionTally: Equatable {
    var started: Int64 = 0
    var crashed: Int64 = 0

    /// 1 − crashed / started, nil before any session.
    var crashFreeRate: Double? { started > 0 ? 1 - Double(min(crashed, started)) / Double(started) : nil }
}

/// One read over session items: the tally per release and environment, and the sessions already
/// counted. A session counts once, at its first update (`init: true`), and as crashed once, at the
/// update that says so — also when the SDK sent that update twice (at-least-once delivery: a kill
/// between the server's answer and the outbox file's removal sends it again).
struct SessionReading {
    private(set) var tally: [String: [String: SessionTally]] = [:]
    private var started: Set<String> = []
    private var crashed: Set<String> = []

    /// Adds one stored item (`type` is `session` or `sessions`). Client numbers are summed
    /// saturating (SessionCounting checked them).
    mutating func add(type: String, payload: Data) {
        guard let v = try? JSONParser.parse(payload) else { return }
        let release = v["attrs"]?["release"]?.stringValue ?? "(no release)"
        let env = v["attrs"]?["environment"]?.stringValue ?? "production"
        var b = tally[release]?[env] ?? SessionTally()
        if type == "session" {
            let sid = v["sid"]?.stringValue
            // An update without a session id cannot be matched with another: it counts as sent.
            func first(_ seen: inout Set<String>) -> Bool { sid.map { seen.insert($0).inserted } ?? true }
            if v["init"]?.boolValue == true, first(&started) { b.started = SessionCounting.saturatingAdd(b.started, 1) }
            if v["status"]?.stringValue == "crashed", first(&crashed) { b.crashed = SessionCounting.saturatingAdd(b.crashed, 1) }
        } else {
            for a in v["aggregates"]?.arrayValue ?? [] {
                let crashed = max(0, a["crashed"]?.int64Value ?? 0)
                for n in [a["exited"]?.int64Value ?? 0, a["errored"]?.int64Value ?? 0, a["abnormal"]?.int64Value ?? 0, crashed] {
                    b.started = SessionCounting.saturatingAdd(b.started, max(0, n))
                }
                b.crashed = SessionCounting.saturatingAdd(b.crashed, crashed)
            }
        }
        tally[release, default: [:]][env] = b
    }
}

enum ReleaseHealth {
    /// A session item larger than this is not read for alerts (a session update is ~200 bytes; an
    /// aggregate of a few hundred buckets a few KiB): what one check can cost stays bounded.
    static let maxItemBytes = 64 * 1024

    /// Per release (all environments together) over the session items received since `since`,
    /// newest first, at most `limit` items, each read and dropped in turn.
    static func byRelease(_ c: any SQLSession, dialect: SQLDialect, projectID: Int64, since: Double, limit: Int) throws -> [String: SessionTally] {
        var reading = SessionReading()
        for type in ["session", "sessions"] {
            try c.execute(
                """
                SELECT payload FROM items WHERE project_id = ? AND type = ? AND received >= ? AND \(dialect.byteLength)(payload) <= ?
                ORDER BY id DESC LIMIT ?
                """, [.int(projectID), .text(type), .double(since), .int(Int64(maxItemBytes)), .int(Int64(limit))]
            ) { row in reading.add(type: type, payload: row.blob(0)) }
        }
        return reading.tally.mapValues { envs in
            envs.values.reduce(into: SessionTally()) { sum, t in
                sum.started = SessionCounting.saturatingAdd(sum.started, t.started)
                sum.crashed = SessionCounting.saturatingAdd(sum.crashed, t.crashed)
            }
        }
    }
}
