// Reading user feedback back: the newest feedback items of a project, and which issue each is
// about (through the occurrence of the event it names). Feedback is rare next to events, so the
// newest `limit` items are read and matched in turn rather than indexed by event; the bound keeps
// a page's cost fixed however much feedback a project collects.
import FaultlineProtocol
import Foundation

struct UserFeedbackReads {
    let store: any Store
    let database: any SQLDatabase

    /// Feedback items read per request at most (the API's `limit`, the issue page's scan).
    static let maxScanned = 500

    /// The newest feedback of a project, newest first, each with its issue (nil: no stored event).
    func latest(projectID: Int64, limit: Int) throws -> [(feedback: UserFeedback, issueID: Int64?)] {
        var rows: [(type: String, payload: Data, id: Int64, received: Double)] = []
        try database.reading { c in
            _ = try c.execute(
                "SELECT type, payload, id, received FROM items WHERE project_id = ? AND type IN (?, ?) ORDER BY id DESC LIMIT ?",
                [.int(projectID), .text(UserFeedback.itemTypes[0]), .text(UserFeedback.itemTypes[1]), .int(Int64(min(limit, Self.maxScanned)))]
            ) { row in rows.append((row.text(0) ?? "", row.blob(1), row.int(2), row.double(3))) }
        }
        return try rows.compactMap { r in
            guard let f = UserFeedback.decode(type: r.type, payload: r.payload, id: r.id, received: r.received) else { return nil }
            let issue = try f.eventID.flatMap { try store.occurrence(projectID: projectID, eventID: $0)?.issueID }
            return (f, issue)
        }
    }

    /// What users wrote about an issue's events, newest first (among the project's newest feedback).
    func about(issueID: Int64, projectID: Int64) throws -> [UserFeedback] {
        try latest(projectID: projectID, limit: Self.maxScanned).filter { $0.issueID == issueID }.map(\.feedback)
    }
}
