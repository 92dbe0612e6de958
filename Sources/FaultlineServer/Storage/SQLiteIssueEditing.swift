// `IssueEditing` over the SQLite writer's connection: one statement per primitive, run inside the
// transaction `SQLiteStore.editIssues` opened. The policy that strings them together is IssueMerger.
import Foundation

struct SQLiteIssueEditing: IssueEditing {
    let c: SQLiteConnection

    func shares(ofStack stackKey: String, projectID: Int64) throws -> [StackShare] {
        var out: [StackShare] = []
        try c.query("SELECT issue_id, count(*) FROM occurrences WHERE stack_key = ? AND project_id = ? AND issue_id IS NOT NULL GROUP BY issue_id",
                    .text(stackKey), .int(projectID)) { out.append(StackShare(issue: $0.int(0), occurrences: $0.int(1))) }
        return out
    }

    func issueID(projectID: Int64, fingerprintHash: String) throws -> Int64? {
        var id: Int64?
        try c.query("SELECT id FROM issues WHERE project_id = ? AND fingerprint = ?", .int(projectID), .text(fingerprintHash)) { id = $0.int(0) }
        return id
    }

    func recordedCount(issueID: Int64) throws -> Int64 {
        var n: Int64 = 0
        try c.query("SELECT count FROM issues WHERE id = ?", .int(issueID)) { n = $0.int(0) }
        return n
    }

    func createIssue(projectID: Int64, fingerprint: Fingerprint) throws -> Int64 {
        try SQLiteStore.upsertIssue(c, projectID: projectID, fingerprint: fingerprint, timestamp: 0, count: 0)
    }

    func describe(issueID: Int64, as f: Fingerprint, rekey: Bool) throws {
        if rekey {
            _ = try c.run("UPDATE issues SET fingerprint = ?, title = ?, culprit = ?, symbolicated = ? WHERE id = ?",
                          .text(f.hash), .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0), .int(issueID))
        } else {
            _ = try c.run("UPDATE issues SET title = ?, culprit = ?, symbolicated = ? WHERE id = ?",
                          .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0), .int(issueID))
        }
    }

    func moveOccurrences(ofStack stackKey: String, projectID: Int64, to issueID: Int64) throws -> Int64 {
        Int64(try c.run("UPDATE occurrences SET issue_id = ? WHERE stack_key = ? AND project_id = ? AND issue_id IS NOT ?",
                        .int(issueID), .text(stackKey), .int(projectID), .int(issueID)))
    }

    func moveOccurrences(ofIssue source: Int64, to target: Int64) throws -> Int64 {
        Int64(try c.run("UPDATE occurrences SET issue_id = ? WHERE issue_id = ?", .int(target), .int(source)))
    }

    func markMerged(_ issue: Int64, into target: Int64) throws {
        _ = try c.run("UPDATE issues SET merged_into = ?, fingerprint = 'merged:' || id, count = 0 WHERE id = ?", .int(target), .int(issue))
        _ = try c.run("UPDATE issues SET merged_into = ? WHERE merged_into = ?", .int(target), .int(issue))
    }

    func recount(issueID: Int64) throws { try SQLiteStore.recomputeIssue(c, issueID) }
}
