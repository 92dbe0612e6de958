// `IssueEditing` over one SQLite or PostgreSQL connection, inside the transaction `editIssues`
// opened (SQLite's writer thread, a pooled PostgreSQL connection): one statement or two per
// primitive, written once over `SQLSession`. The policy that strings them together is IssueMerger.
import Foundation

struct SQLIssueEditing: IssueEditing {
    let c: any SQLSession
    let dialect: SQLDialect

    func shares(ofStack stackKey: String, projectID: Int64) throws -> [StackShare] {
        // Counted per stored issue id from the (stack_key, project_id, issue_id) index alone, then
        // folded onto the live issues those ids resolve to.
        try c.rows(
            """
            SELECT coalesce(i.merged_into, i.id), CAST(sum(s.n) AS BIGINT) FROM
              (SELECT issue_id, count(*) AS n FROM occurrences WHERE stack_key = ? AND project_id = ? AND issue_id IS NOT NULL GROUP BY issue_id) AS s
            JOIN issues i ON i.id = s.issue_id
            GROUP BY 1 ORDER BY 1
            """, .text(stackKey), .int(projectID)
        ) { StackShare(issue: $0.int(0), occurrences: $0.int(1)) }
    }

    func issueID(projectID: Int64, fingerprintHash: String) throws -> Int64? {
        try c.first("SELECT coalesce(merged_into, id) FROM issues WHERE project_id = ? AND fingerprint = ?", .int(projectID), .text(fingerprintHash)) {
            $0.int(0)
        }
    }

    func recordedCount(issueID: Int64) throws -> Int64 {
        try c.first("SELECT count FROM issues WHERE id = ?", .int(issueID)) { $0.int(0) } ?? 0
    }

    func createIssue(projectID: Int64, fingerprint f: Fingerprint) throws -> Int64 {
        // Called when no issue had the fingerprint; a grouping commit that made one since (while
        // the regrouping claim was being taken) is answered with that issue, not a failed batch.
        try c.first(
            """
            INSERT INTO issues(project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated)
            VALUES(?, ?, ?, ?, 0, 0, 0, ?)
            ON CONFLICT(project_id, fingerprint) DO UPDATE SET title = excluded.title RETURNING id
            """, .int(projectID), .text(f.hash), .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0)
        ) { $0.int(0) } ?? 0
    }

    func describe(issueID: Int64, as f: Fingerprint, rekey: Bool) throws {
        if rekey {
            try c.execute(
                "UPDATE issues SET fingerprint = ?, title = ?, culprit = ?, symbolicated = ? WHERE id = ?",
                .text(f.hash), .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0), .int(issueID))
        } else {
            try c.execute(
                "UPDATE issues SET title = ?, culprit = ?, symbolicated = ? WHERE id = ?",
                .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0), .int(issueID))
        }
    }

    func moveOccurrences(ofStack stackKey: String, projectID: Int64, to issueID: Int64) throws -> Int64 {
        let m = try IssueGroups.membership(c, "issue_id", issue: issueID)
        return Int64(
            try c.execute(
                """
                UPDATE occurrences SET issue_id = ? WHERE stack_key = ? AND project_id = ? AND issue_id IS NOT NULL AND NOT \(m.sql)
                """, [.int(issueID), .text(stackKey), .int(projectID)] + m.args, row: nil))
    }

    func absorb(_ requestedIssue: Int64, into requestedTarget: Int64) throws {
        // Both ends as they are now, inside this transaction: a merge that ran (or, on PostgreSQL,
        // committed) since the caller looked may have emptied either. Merging what they resolve to
        // keeps `merged_into` one level deep and acyclic ("A into B" racing "B into A" was A -> A;
        // "C into A" racing "A into B" left C -> A -> B, outside B's reads).
        var pair: (issue: Int64, target: Int64)? = nil
        for _ in 0..<4 {
            guard let issue = try live(requestedIssue), let target = try live(requestedTarget) else { return }
            if issue == target { return }  // already one issue
            // PostgreSQL: both rows locked in id order, so grouping or a merge on another node cannot
            // change them between here and the updates below (SQLite has one writer); then checked
            // again, since the lock may have waited for a merge that emptied one of them.
            if dialect == .postgres {
                try c.execute("SELECT id FROM issues WHERE id IN (?, ?) ORDER BY id FOR UPDATE", [.int(issue), .int(target)]) { _ in }
                guard try live(issue) == issue, try live(target) == target else { continue }
            }
            pair = (issue, target)
            break
        }
        guard let (issue, target) = pair else { throw IssueMergeRaceError(issue: requestedIssue, target: requestedTarget) }
        let least = dialect == .sqlite ? "min" : "least"
        try c.execute(
            """
            UPDATE issues SET count = issues.count + s.count,
              first_seen = CASE WHEN issues.count = 0 THEN s.first_seen WHEN s.count = 0 THEN issues.first_seen ELSE \(least)(issues.first_seen, s.first_seen) END,
              last_seen = CASE WHEN issues.count = 0 THEN s.last_seen WHEN s.count = 0 THEN issues.last_seen ELSE \(dialect.greatest)(issues.last_seen, s.last_seen) END
            FROM (SELECT count, first_seen, last_seen FROM issues WHERE id = ?) AS s
            WHERE issues.id = ?
            """, .int(issue), .int(target))
        try c.execute(
            """
            INSERT INTO issue_releases(issue_id, release) SELECT CAST(? AS BIGINT), release FROM issue_releases WHERE issue_id = ?
            ON CONFLICT DO NOTHING
            """, .int(target), .int(issue))
        try c.execute("DELETE FROM issue_releases WHERE issue_id = ?", .int(issue))
        // The fingerprint stays: grouping counts its later occurrences into the target.
        try c.execute("UPDATE issues SET merged_into = ?, count = 0 WHERE id = ?", .int(target), .int(issue))
        try c.execute("UPDATE issues SET merged_into = ? WHERE merged_into = ?", .int(target), .int(issue))
    }

    /// The live issue `id` resolves to (itself, or the one it was merged into); nil when unknown.
    private func live(_ id: Int64) throws -> Int64? {
        try c.rows("SELECT coalesce(merged_into, id) FROM issues WHERE id = ?", .int(id)) { $0.int(0) }.first
    }

    func recount(issueID: Int64) throws { try IssueGroups.recount(c, issueID) }
}

/// Merges kept changing under one another on PostgreSQL (four tries): the transaction fails and
/// nothing is merged.
struct IssueMergeRaceError: Error, CustomStringConvertible {
    let issue: Int64, target: Int64
    var description: String { "issue \(issue) or \(target) kept being merged by others while merging them; try again" }
}
