// The `Store` reads and the `IssueReads` feature store (issues, occurrences, counts): the same
// statements on both stores, written once over `SQLDatabase` and given to SQLiteStore and
// PostgresStore by `SQLBackedStore`.
// Each read is one read transaction: one snapshot, on both.
import Foundation

enum SQLStoreReads {
    /// The issue with its releases; nil if there is no such row.
    static func issue(_ c: any SQLSession, id: Int64) throws -> IssueRecord? {
        guard var i = try c.first("SELECT \(IssueRows.columns) FROM issues WHERE id = ?", .int(id), map: IssueRows.issue) else { return nil }
        i.releases = try c.rows("SELECT release FROM issue_releases WHERE issue_id = ? ORDER BY release", .int(id)) { $0.text(0) ?? "" }
        return i
    }

    static func unprocessed(_ c: any SQLSession, limit: Int) throws -> [StoredOccurrence] {
        try c.rows("\(OccurrenceRows.select) WHERE processed = 0 ORDER BY id LIMIT ?", .int(Int64(limit)), map: OccurrenceRows.occurrence)
    }
}

extension SQLBackedStore {
    private var db: any SQLDatabase { sqlBacking.database }

    public func issues(projectID: Int64, limit: Int, offset: Int) throws -> [IssueRecord] {
        try db.reading { c in
            try c.rows(
                "SELECT id FROM issues WHERE project_id = ? AND merged_into IS NULL AND count > 0 ORDER BY last_seen DESC, id DESC LIMIT ? OFFSET ?",
                .int(projectID), .int(Int64(limit)), .int(Int64(offset))
            ) { $0.int(0) }
            .compactMap { try SQLStoreReads.issue(c, id: $0) }
        }
    }

    public func issue(id: Int64) throws -> IssueRecord? {
        try db.reading { c in
            var current = id
            for _ in 0..<32 {
                guard let found = try SQLStoreReads.issue(c, id: current) else { return nil }
                guard let next = found.mergedInto else { return found }
                current = next
            }
            return nil
        }
    }

    public func occurrences(issueID: Int64, limit: Int, offset: Int) throws -> [StoredOccurrence] {
        try db.reading { c in
            let q = IssueGroups.newestFirst(
                columns: OccurrenceRows.columns, issue: issueID, members: try IssueGroups.members(c, issueID), limit: limit, offset: offset)
            return try c.rows(q.sql, q.args, OccurrenceRows.occurrence)
        }
    }

    public func occurrences(issueID: Int64, before: Int64, limit: Int) throws -> [StoredOccurrence] {
        try db.reading { c in
            let q = IssueGroups.newestFirst(
                columns: OccurrenceRows.columns, issue: issueID, members: try IssueGroups.members(c, issueID), before: before, limit: limit)
            return try c.rows(q.sql, q.args, OccurrenceRows.occurrence)
        }
    }

    public func occurrence(projectID: Int64, eventID: String) throws -> StoredOccurrence? {
        try db.reading { c in
            try c.first("\(OccurrenceRows.select) WHERE project_id = ? AND event_id = ?", .int(projectID), .text(eventID), map: OccurrenceRows.occurrence)
        }
    }

    public func occurrence(id: Int64) throws -> StoredOccurrence? {
        try db.reading { c in try c.first("\(OccurrenceRows.select) WHERE id = ?", .int(id), map: OccurrenceRows.occurrence) }
    }

    public func counts(projectID: Int64) throws -> (occurrences: Int64, processed: Int64, issues: Int64) {
        try db.reading { c in
            // The project's rows from the (project_id, event_id) index; its ungrouped ones from
            // the partial index, which holds only the ungrouped rows of every project (each one's
            // project read from its row: a backlog's worth, not the table). `+project_id` keeps
            // SQLite's planner off the project's index there: it chose it, and then read every row
            // of the project from the table to test `processed` (events and all, on each poll).
            let all = try c.first("SELECT count(*) FROM occurrences WHERE project_id = ?", .int(projectID)) { $0.int(0) } ?? 0
            let ungrouped = try c.first("SELECT count(*) FROM occurrences WHERE processed = 0 AND +project_id = ?", .int(projectID)) { $0.int(0) } ?? 0
            let issues =
                try c.first("SELECT count(*) FROM issues WHERE project_id = ? AND merged_into IS NULL AND count > 0", .int(projectID)) { $0.int(0) } ?? 0
            return (all, all - ungrouped, issues)
        }
    }

    public func itemCounts(projectID: Int64) throws -> ItemCounts {
        try db.reading { c in
            var counts = ItemCounts(byType: [:], sessionsTotal: 0, sessionsCrashed: 0)
            try c.execute("SELECT type, count(*) FROM items WHERE project_id = ? GROUP BY type", [.int(projectID)]) {
                counts.byType[$0.text(0) ?? ""] = $0.int(1)
            }
            try c.execute("SELECT total, crashed FROM session_counts WHERE project_id = ?", [.int(projectID)]) {
                counts.sessionsTotal = $0.int(0); counts.sessionsCrashed = $0.int(1)
            }
            return counts
        }
    }

    /// Stored and grouped occurrences across projects (benchmarks and tests poll this).
    public func totals() throws -> (occurrences: Int64, processed: Int64) {
        try db.reading { c in
            let all = try c.first("SELECT count(*) FROM occurrences") { $0.int(0) } ?? 0
            let ungrouped = try c.first("SELECT count(*) FROM occurrences WHERE processed = 0") { $0.int(0) } ?? 0
            return (all, all - ungrouped)
        }
    }
}

extension SQLiteStore: IssueReads {}
extension PostgresStore: IssueReads {}
