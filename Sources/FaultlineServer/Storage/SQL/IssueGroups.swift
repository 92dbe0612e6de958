// Which occurrences an issue holds: the rows that name it and the rows that name an issue merged
// into it. A merge re-points the merged issue (`merged_into`), never its occurrences, so a backfill
// that folds 1,500 offset-grouped issues into their symbolicated ones writes a few rows per issue
// instead of rewriting 75,000 occurrence rows and their three indexes (tools/results/backfill-*).
// `merged_into` always names a live issue (a merge re-points the issues merged into the one it
// empties), so membership is one level deep. Every per-issue read and recount goes through here;
// written once for both stores over `SQLSession`.
import Foundation

enum IssueGroups {
    /// The issue ids whose rows are `issueID`'s occurrences: itself when live, and every issue
    /// merged into it. Empty for a merged issue (its rows read as the live one's).
    static func members(_ c: any SQLSession, _ issueID: Int64) throws -> [Int64] {
        try c.rows("SELECT id FROM issues WHERE (id = ?1 AND merged_into IS NULL) OR merged_into = ?1 ORDER BY id", .int(issueID)) { $0.int(0) }
    }

    /// `column IN (…)` over `ids`, with its values ("IN (NULL)" matches nothing, on both stores).
    /// Past `listedMembers` ids, the members are named by a subquery on `issue` instead: a list
    /// as bound parameters stops at SQLite's 32,766 and PostgreSQL's 65,535, and each length
    /// would be one more statement in the caches.
    static func isMember(_ column: String, _ ids: [Int64], issue: Int64) -> (sql: String, args: [SQLValue]) {
        guard !ids.isEmpty else { return ("\(column) IN (NULL)", []) }
        guard ids.count <= listedMembers else {
            return ("\(column) IN (SELECT id FROM issues WHERE (id = ? AND merged_into IS NULL) OR merged_into = ?)", [.int(issue), .int(issue)])
        }
        return ("\(column) IN (\(ids.map { _ in "?" }.joined(separator: ", ")))", ids.map { .int($0) })
    }

    static let listedMembers = 64

    /// `isMember` for `issue`'s members as they are now.
    static func membership(_ c: any SQLSession, _ column: String, issue: Int64) throws -> (sql: String, args: [SQLValue]) {
        isMember(column, try members(c, issue), issue: issue)
    }

    /// The live issue an occurrence's `issue_id` column names (NULL for an ungrouped row), as an
    /// expression usable in any statement over `occurrences`.
    static func resolved(_ column: String) -> String {
        "(SELECT coalesce(g.merged_into, g.id) FROM issues g WHERE g.id = \(column))"
    }

    /// `columns` of the newest occurrences of an issue with `id < before`, `limit` after skipping
    /// `offset`. One member (the common case) is one index range; several are one limited range per
    /// member, merged: a plain `IN` would sort every occurrence of a large merged issue per page.
    static func newestFirst(columns: String, issue: Int64, members: [Int64], before: Int64 = Int64.max, limit: Int, offset: Int = 0) -> (
        sql: String, args: [SQLValue]
    ) {
        // limit and offset come from a request: added without overflow.
        let (sum, overflow) = Int64(limit).addingReportingOverflow(Int64(offset))
        let take = overflow ? Int64.max : sum
        // One limited range per member up to 64 members; past that a plain `IN` sorted once
        // (SQLite caps a compound SELECT at 500 terms, and one issue can absorb thousands).
        if members.count <= 1 || members.count > listedMembers {
            let m = isMember("issue_id", members, issue: issue)
            return (
                "SELECT \(columns) FROM occurrences WHERE \(m.sql) AND id < ? ORDER BY id DESC LIMIT ? OFFSET ?",
                m.args + [.int(before), .int(Int64(limit)), .int(Int64(offset))]
            )
        }
        var parts: [String] = [], args: [SQLValue] = []
        for (i, id) in members.enumerated() {
            parts.append("SELECT * FROM (SELECT \(columns) FROM occurrences WHERE issue_id = ? AND id < ? ORDER BY id DESC LIMIT ?) AS m\(i)")
            args += [.int(id), .int(before), .int(take)]
        }
        return (
            "SELECT * FROM (\(parts.joined(separator: " UNION ALL "))) AS g ORDER BY id DESC LIMIT ? OFFSET ?",
            args + [.int(Int64(limit)), .int(Int64(offset))]
        )
    }

    /// Count, first/last seen and releases of a live issue from the occurrences it holds now. A
    /// merged issue loses its releases (they went to the one it was merged into), and that one is
    /// recounted instead: rows moved or deleted under the merged id (a backfill or retention that
    /// raced the merge) are then still counted where they now belong.
    static func recount(_ c: any SQLSession, _ id: Int64) throws {
        let members = try self.members(c, id)
        try c.execute("DELETE FROM issue_releases WHERE issue_id = ?", .int(id))
        guard !members.isEmpty else {
            if let live = try c.rows("SELECT merged_into FROM issues WHERE id = ?", [.int(id)], { $0.int(0) }).first, live != 0, live != id,
                try !self.members(c, live).isEmpty
            {
                try recount(c, live)
            }
            return
        }
        let m = isMember("o.issue_id", members, issue: id)
        // One pass over the occurrences for all three (three subqueries read them three times).
        try c.execute(
            """
            UPDATE issues SET (count, first_seen, last_seen) =
              (SELECT count(*), coalesce(min(o.timestamp), issues.first_seen), coalesce(max(o.timestamp), issues.last_seen)
               FROM occurrences o WHERE \(m.sql))
            WHERE id = ?
            """, m.args + [.int(id)], row: nil)
        try c.execute(
            """
            INSERT INTO issue_releases(issue_id, release) SELECT DISTINCT CAST(? AS BIGINT), o.release FROM occurrences o
            WHERE \(m.sql) AND o.release IS NOT NULL
            """, [.int(id)] + m.args, row: nil)
    }
}
