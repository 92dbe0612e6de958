// The issue lifecycle as a feature of the server: statuses with Sentry's semantics, releases and
// their order, short ids. Its tables live in the same database as the core store (SQLDatabase,
// both back ends); the alert evaluator applies `IssueLifecycle.occurred` to each new occurrence.
import Foundation
import FaultlineProtocol

public final class Lifecycle: @unchecked Sendable {
    let store: any Store
    let database: any SQLDatabase

    init(store: any Store, database: any SQLDatabase) {
        self.store = store
        self.database = database
    }
    public convenience init(store: SQLiteStore) { self.init(store: store, database: store) }
    public convenience init(store: PostgresStore) { self.init(store: store, database: store) }

    /// `DEFAULT-12`: the project's slug in capitals and the issue's id, as Sentry's short ids read.
    public static func shortID(projectSlug: String, issueID: Int64) -> String {
        projectSlug.uppercased() + "-" + String(issueID)
    }

    public func state(issueID: Int64) throws -> IssueState {
        try database.reading { try IssueLifecycle.state($0, issueID: issueID) }
    }

    /// Sets a status on live issues (an id merged away resolves to its issue).
    public func update(issueIDs: [Int64], status: IssueStatus, details: IssueStatusDetails) throws {
        let live = try Set(issueIDs.compactMap { try store.issue(id: $0)?.id }).sorted()
        try database.writing { c in try IssueLifecycle.set(c, issueIDs: live, status: status, details: details, now: Date().timeIntervalSince1970) }
    }

    /// The Sentry-style fields an issue carries in the API: `shortId`, `status`, `statusDetails`,
    /// `firstSeen`/`lastSeen` (RFC 3339), `permalink` (`level`, the latest event's, is ReadAPI's).
    func sentryFields(_ issue: IssueRecord, projectSlug: String, publicURL: String?) throws -> [String: JSONValue] {
        let s = try state(issueID: issue.id)
        var o: [String: JSONValue] = [
            "shortId": .string(Self.shortID(projectSlug: projectSlug, issueID: issue.id)),
            "status": .string(s.status.rawValue), "statusDetails": s.details.json,
            "firstSeen": .string(SentryTimestamp.rfc3339(issue.firstSeen)), "lastSeen": .string(SentryTimestamp.rfc3339(issue.lastSeen)),
            "regressions": .int(s.regressions)
        ]
        if let base = publicURL { o["permalink"] = .string(base + "/ui/issues/\(issue.id)") }
        let (assignee, comments) = try database.reading { c in
            (
                try IssueNotes.assignee(c, issueID: issue.id),
                try c.first("SELECT count(*) FROM issue_comments WHERE issue_id = ?", .int(issue.id)) { $0.int(0) } ?? 0
            )
        }
        o["assignedTo"] = IssueNotes.assigneeJSON(assignee)
        o["numComments"] = .int(comments)
        return o
    }
}
