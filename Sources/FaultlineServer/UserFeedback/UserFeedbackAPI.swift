// GET /api/0/projects/<org>/<project>/user-feedback/ (server token): the project's user feedback,
// newest first, in Sentry's `UserReport` shape (id, eventID, name, email, comments, dateCreated,
// issue), at most `?limit=` (100 unless given, UserFeedbackReads.maxScanned at most).
import FaultlineProtocol
import Foundation

struct UserFeedbackAPI {
    let reads: UserFeedbackReads

    func list(_ r: HTTPRequest, project slug: String) throws -> HTTPResponse {
        guard let project = try reads.store.project(idOrSlug: slug) else { return .detail(404, "no project '\(slug)'") }
        let limit = min(max(Int(r.query["limit"] ?? "") ?? 100, 1), UserFeedbackReads.maxScanned)
        return .json(.array(try reads.latest(projectID: project.id, limit: limit).map { $0.feedback.json(issueID: $0.issueID) }))
    }
}
