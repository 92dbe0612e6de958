// What a release's events did, as Sentry's release API reports it (`firstEvent`, `lastEvent`,
// `newGroups`; `sentry-cli releases list` prints its "New Events" and "Last Event" columns from
// them). Kept by the alert evaluator, which reads every grouped occurrence once, in id order and in
// one transaction per batch (so each is counted once), instead of by ingest: it costs the
// ingest path nothing and needs no index on the occurrences' release. Schema migration 17.
import Foundation

enum ReleaseActivity {
    /// When a release's events were received, first and last, and how many issues it brought.
    struct Tally: Equatable {
        var firstEvent: Double
        var lastEvent: Double
        var newGroups: Int64 = 0
    }

    struct Key: Hashable, Comparable {
        var projectID: Int64
        var version: String
        static func < (a: Self, b: Self) -> Bool { (a.projectID, a.version) < (b.projectID, b.version) }
    }

    /// Adds one evaluated batch's tallies, in key order (the order every evaluator writes them).
    static func record(_ c: any SQLSession, _ batch: [Key: Tally], dialect: SQLDialect) throws {
        let least = dialect == .sqlite ? "min" : "least"
        for key in batch.keys.sorted() {
            let t = batch[key]!
            try c.execute(
                """
                INSERT INTO release_activity(project_id, version, first_event, last_event, new_groups) VALUES(?, ?, ?, ?, ?)
                ON CONFLICT(project_id, version) DO UPDATE SET
                  first_event = \(least)(release_activity.first_event, excluded.first_event),
                  last_event = \(dialect.greatest)(release_activity.last_event, excluded.last_event),
                  new_groups = release_activity.new_groups + excluded.new_groups
                """, .int(key.projectID), .text(key.version), .double(t.firstEvent), .double(t.lastEvent), .int(t.newGroups))
        }
    }

    /// The release's tally over `projectIDs` (first and last over all, new groups summed); nil
    /// when none of them has received an event of it.
    static func tally(_ c: any SQLSession, projectIDs: [Int64], version: String) throws -> Tally? {
        var out: Tally?
        for p in projectIDs {
            let row = try c.first(
                "SELECT first_event, last_event, new_groups FROM release_activity WHERE project_id = ? AND version = ?", .int(p), .text(version)
            ) { Tally(firstEvent: $0.double(0), lastEvent: $0.double(1), newGroups: $0.int(2)) }
            guard let row else { continue }
            out =
                out.map {
                    Tally(firstEvent: min($0.firstEvent, row.firstEvent), lastEvent: max($0.lastEvent, row.lastEvent), newGroups: $0.newGroups + row.newGroups)
                } ?? row
        }
        return out
    }

    /// Migration 17 (`WHERE true`: SQLite's parser needs it between an INSERT's SELECT and ON
    /// CONFLICT): the table, and the evaluator's cursor where it had none yet, at the bound used
    /// here (computed again at the evaluator's first start, occurrences grouped in between would
    /// be counted by neither), filled from the occurrences the evaluator has already passed (it
    /// never reads those again; later ones it counts itself). An issue's first occurrence is the
    /// lowest id among its rows and those of the issues merged into it.
    static func migration(_ dialect: SQLDialect) -> String {
        let (real, int, least) = dialect == .sqlite ? ("REAL", "INTEGER", "min") : ("DOUBLE PRECISION", "BIGINT", "least")
        let evaluated = """
            coalesce((SELECT value FROM alert_cursor WHERE name = 'occurrences'),
              \(least)(coalesce((SELECT max(id) FROM occurrences WHERE processed = 1), 0),
                coalesce((SELECT min(id) FROM occurrences WHERE processed = 0) - 1, (SELECT max(id) FROM occurrences WHERE processed = 1), 0)))
            """
        return """
            CREATE TABLE IF NOT EXISTS release_activity(
                project_id \(int) NOT NULL, version TEXT NOT NULL, first_event \(real) NOT NULL, last_event \(real) NOT NULL,
                new_groups \(int) NOT NULL DEFAULT 0, PRIMARY KEY(project_id, version))\(dialect == .sqlite ? " WITHOUT ROWID" : "");
            INSERT INTO release_activity(project_id, version, first_event, last_event, new_groups)
            WITH firsts AS (
                SELECT min(o.id) AS id FROM occurrences o JOIN issues i ON i.id = o.issue_id
                WHERE o.processed = 1 GROUP BY coalesce(i.merged_into, i.id)),
              news AS (
                SELECT o.project_id, o.release, count(*) AS n FROM firsts f JOIN occurrences o ON o.id = f.id
                WHERE o.release IS NOT NULL AND f.id <= \(evaluated) GROUP BY o.project_id, o.release),
              seen AS (
                SELECT project_id, release, min(received) AS first_event, max(received) AS last_event FROM occurrences
                WHERE release IS NOT NULL AND processed = 1 AND id <= \(evaluated) GROUP BY project_id, release)
            SELECT s.project_id, s.release, s.first_event, s.last_event, coalesce(n.n, 0) FROM seen s
            LEFT JOIN news n ON n.project_id = s.project_id AND n.release = s.release
            WHERE true
            ON CONFLICT(project_id, version) DO NOTHING;
            INSERT INTO alert_cursor(name, value)
            SELECT 'occurrences', \(evaluated) WHERE NOT EXISTS (SELECT 1 FROM alert_cursor WHERE name = 'occurrences')
            """
    }
}
