// `IssueEditing` over one PostgreSQL connection, inside the transaction `PostgresStore.editIssues`
// opened: SQLiteIssueEditing's statements in PostgreSQL's dialect. The policy is IssueMerger's.
import Foundation

struct PostgresIssueEditing: IssueEditing {
    let c: PGConnection

    func shares(ofStack stackKey: String, projectID: Int64) throws -> [StackShare] {
        var out: [StackShare] = []
        try c.query("""
            SELECT issue_id, count(*) FROM occurrences WHERE stack_key = $1 AND project_id = $2 AND issue_id IS NOT NULL
            GROUP BY issue_id ORDER BY issue_id
            """, .text(stackKey), .int(projectID)) { out.append(StackShare(issue: $0.int(0), occurrences: $0.int(1))) }
        return out
    }

    func issueID(projectID: Int64, fingerprintHash: String) throws -> Int64? {
        var id: Int64?
        try c.query("SELECT id FROM issues WHERE project_id = $1 AND fingerprint = $2", .int(projectID), .text(fingerprintHash)) { id = $0.int(0) }
        return id
    }

    func recordedCount(issueID: Int64) throws -> Int64 {
        var n: Int64 = 0
        try c.query("SELECT count FROM issues WHERE id = $1", .int(issueID)) { n = $0.int(0) }
        return n
    }

    func createIssue(projectID: Int64, fingerprint: Fingerprint) throws -> Int64 {
        try PostgresStore.upsertIssue(c, projectID: projectID, fingerprint: fingerprint, timestamp: 0, count: 0)
    }

    func describe(issueID: Int64, as f: Fingerprint, rekey: Bool) throws {
        if rekey {
            try c.query("UPDATE issues SET fingerprint = $1, title = $2, culprit = $3, symbolicated = $4 WHERE id = $5",
                        .text(f.hash), .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0), .int(issueID))
        } else {
            try c.query("UPDATE issues SET title = $1, culprit = $2, symbolicated = $3 WHERE id = $4",
                        .text(f.title), .text(f.culprit), .int(f.symbolicated ? 1 : 0), .int(issueID))
        }
    }

    func moveOccurrences(ofStack stackKey: String, projectID: Int64, to issueID: Int64) throws -> Int64 {
        Int64(try c.query("UPDATE occurrences SET issue_id = $1 WHERE stack_key = $2 AND project_id = $3 AND issue_id IS DISTINCT FROM $1",
                          .int(issueID), .text(stackKey), .int(projectID)))
    }

    func moveOccurrences(ofIssue source: Int64, to target: Int64) throws -> Int64 {
        Int64(try c.query("UPDATE occurrences SET issue_id = $1 WHERE issue_id = $2", .int(target), .int(source)))
    }

    func markMerged(_ issue: Int64, into target: Int64) throws {
        try c.query("UPDATE issues SET merged_into = $1, fingerprint = 'merged:' || id::text, count = 0 WHERE id = $2", .int(target), .int(issue))
        try c.query("UPDATE issues SET merged_into = $1 WHERE merged_into = $2", .int(target), .int(issue))
    }

    func recount(issueID: Int64) throws { try PostgresStore.recomputeIssue(c, issueID) }
}
