// Triage notes on an issue: who it is assigned to, and comments — on the page and in Sentry's API
// (`assignedTo` in the issue update, /api/0/issues/<id>/comments/).
import Foundation
import FaultlineProtocol

public struct IssueComment: Sendable, Equatable {
    public var id: Int64
    public var issueID: Int64
    public var author: String
    public var text: String
    public var created: Double
}

enum IssueNotes {
    /// Longest assignee name and comment kept (bytes); longer ones are refused, never cut.
    static let maxAssigneeBytes = 200
    static let maxCommentBytes = 10_000

    static func validateAssignee(_ name: String) throws(LifecycleError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= maxAssigneeBytes,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw .badRequest("assignedTo must be a name of 1–\(maxAssigneeBytes) bytes without control characters")
        }
        return trimmed
    }

    static func validateComment(_ text: String) throws(LifecycleError) -> String {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, text.utf8.count <= maxCommentBytes, !text.contains("\0") else {
            throw .badRequest("a comment must hold 1–\(maxCommentBytes) bytes of text")
        }
        return text
    }

    static func assignee(_ c: any SQLSession, issueID: Int64) throws -> String? {
        try c.first("SELECT assignee FROM issue_assignees WHERE issue_id = ?", .int(issueID)) { $0.text(0) } ?? nil
    }

    /// nil unassigns.
    static func assign(_ c: any SQLSession, issueID: Int64, to name: String?, now: Double) throws {
        guard let name else {
            try c.execute("DELETE FROM issue_assignees WHERE issue_id = ?", .int(issueID))
            return
        }
        try c.execute(
            """
            INSERT INTO issue_assignees(issue_id, assignee, changed) VALUES(?, ?, ?)
            ON CONFLICT(issue_id) DO UPDATE SET assignee = excluded.assignee, changed = excluded.changed
            """, .int(issueID), .text(name), .double(now))
    }

    @discardableResult
    static func comment(_ c: any SQLSession, issueID: Int64, author: String, text: String, now: Double) throws -> Int64 {
        try c.first(
            "INSERT INTO issue_comments(issue_id, author, text, created) VALUES(?, ?, ?, ?) RETURNING id",
            .int(issueID), .text(author), .text(text), .double(now)
        ) { $0.int(0) } ?? 0
    }

    static func comments(_ c: any SQLSession, issueID: Int64, limit: Int = 500) throws -> [IssueComment] {
        try c.rows(
            "SELECT id, issue_id, author, text, created FROM issue_comments WHERE issue_id = ? ORDER BY id LIMIT ?",
            [.int(issueID), .int(Int64(limit))]
        ) { r in
            IssueComment(id: r.int(0), issueID: r.int(1), author: r.text(2) ?? "", text: r.text(3) ?? "", created: r.double(4))
        }
    }

    static func commentJSON(_ c: IssueComment) -> JSONValue {
        [
            "id": .string(String(c.id)), "type": "note", "data": ["text": .string(c.text)], "text": .string(c.text),
            "user": ["name": .string(c.author)], "dateCreated": .string(SentryTimestamp.rfc3339(c.created))
        ]
    }

    static func assigneeJSON(_ name: String?) -> JSONValue {
        name.map { ["type": "user", "name": .string($0), "id": .string($0)] } ?? .null
    }
}
