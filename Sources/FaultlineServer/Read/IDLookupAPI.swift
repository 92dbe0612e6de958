// Sentry's id lookups: which project and issue an event id (`eventids`) or a short id
// (`shortids`, DEFAULT-12) belongs to, in Sentry's response shapes, so tools that resolve an id
// pasted from a log or a ticket work against Faultline.
import Foundation
import FaultlineProtocol

extension ReadAPI {
    /// `GET /api/0/organizations/<org>/eventids/<event id>/`: the event (dashes and case aside) in
    /// whichever project holds it, with its issue.
    func resolveEventID(org: String, _ text: String) throws -> HTTPResponse {
        guard let id = EnvelopeDecoder.normalisedEventID(text) else { return .detail(404, "no such event") }
        for project in try store.projects() {
            guard let o = try store.occurrence(projectID: project.id, eventID: id), let owner = o.issueID, let issue = try store.issue(id: owner) else {
                continue
            }
            let event = try StoredEvent.decodeForReading(o)
            let pending = reads.settle(EventRenderer.lookups(of: event))
            return .json([
                "organizationSlug": .string(org), "projectSlug": .string(project.slug), "groupId": .string(String(issue.id)), "eventId": .string(id),
                "event": EventRenderer.render(event, symbolicator: symbolicator, pending: pending)
            ])
        }
        return .detail(404, "no such event")
    }

    /// `GET /api/0/organizations/<org>/shortids/<short id>/`: the issue a short id names (case
    /// aside; IssueJump reads it), the one it was merged into if it was.
    func resolveShortID(org: String, _ text: String) throws -> HTTPResponse {
        for project in try store.projects() {
            guard let id = IssueJump.issueID(shortID: text, projectSlug: project.slug), let issue = try store.issue(id: id), issue.projectID == project.id
            else { continue }
            return .json([
                "organizationSlug": .string(org), "projectSlug": .string(project.slug), "groupId": .string(String(issue.id)),
                "shortId": .string(Lifecycle.shortID(projectSlug: project.slug, issueID: issue.id)),
                "group": try issueJSON(issue, withStack: false, project: project)
            ])
        }
        return .detail(404, "no such issue")
    }
}
