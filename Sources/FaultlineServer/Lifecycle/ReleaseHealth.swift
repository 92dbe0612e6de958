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

enum ReleaseHealth {
    /// Adds one stored item (`type` is `session` or `sessions`) to `tally[release][environment]`.
    /// A session counts once, at its first update (`init: true`); it counts as crashed at the
    /// update that says so. Client numbers are summed saturating (SessionCounting checked them).
    static func add(type: String, payload: Data, into tally: inout [String: [String: SessionTally]]) {
        guard let v = try? JSONParser.parse(payload) else { return }
        let release = v["attrs"]?["release"]?.stringValue ?? "(no release)"
        let env = v["attrs"]?["environment"]?.stringValue ?? "production"
        var b = tally[release]?[env] ?? SessionTally()
        if type == "session" {
            if v["init"]?.boolValue == true { b.started = SessionCounting.saturatingAdd(b.started, 1) }
            if v["status"]?.stringValue == "crashed" { b.crashed = SessionCounting.saturatingAdd(b.crashed, 1) }
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

    /// A session item larger than this is not read for alerts (a session update is ~200 bytes; an
    /// aggregate of a few hundred buckets a few KiB): what one check can cost stays bounded.
    static let maxItemBytes = 64 * 1024

    /// Per release (all environments together) over the session items received since `since`,
    /// newest first, at most `limit` items, each read and dropped in turn.
    static func byRelease(_ c: any SQLSession, dialect: SQLDialect, projectID: Int64, since: Double, limit: Int) throws -> [String: SessionTally] {
        var tally: [String: [String: SessionTally]] = [:]
        for type in ["session", "sessions"] {
            try c.execute(
                """
                SELECT payload FROM items WHERE project_id = ? AND type = ? AND received >= ? AND \(dialect.byteLength)(payload) <= ?
                ORDER BY id DESC LIMIT ?
                """, [.int(projectID), .text(type), .double(since), .int(Int64(maxItemBytes)), .int(Int64(limit))]
            ) { row in add(type: type, payload: row.blob(0), into: &tally) }
        }
        return tally.mapValues { envs in
            envs.values.reduce(into: SessionTally()) { sum, t in
                sum.started = SessionCounting.saturatingAdd(sum.started, t.started)
                sum.crashed = SessionCounting.saturatingAdd(sum.crashed, t.crashed)
            }
        }
    }
}
