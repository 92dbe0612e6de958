// The issues list's search box also takes what people copy from elsewhere: an event id as an
// SDK prints it (32 hex digits, with or without the UUID's dashes) or an issue's short id
// (`DEFAULT-12`, Lifecycle.shortID). Either names one issue; the list sends the browser there.
import Foundation

enum IssueJump {
    /// The page of the issue `text` names in `project`: the occurrence's own page for an event id,
    /// the issue's for a short id; nil when `text` is neither or names nothing of this project.
    static func target(_ text: String, project: ProjectRecord, store: any Store) throws -> String? {
        let typed = text.trimmingCharacters(in: .whitespaces)
        if let eventID = EnvelopeDecoder.normalisedEventID(typed), let o = try store.occurrence(projectID: project.id, eventID: eventID), let owner = o.issueID,
            let issue = try store.issue(id: owner)
        {
            return "/ui/issues/\(issue.id)?event=\(o.id)"
        }
        if let id = issueID(shortID: typed, projectSlug: project.slug), let issue = try store.issue(id: id), issue.projectID == project.id {
            return "/ui/issues/\(issue.id)"
        }
        return nil
    }

    /// The issue id of a short id of this project, case aside; the spelling is Lifecycle.shortID's.
    static func issueID(shortID typed: String, projectSlug: String) -> Int64? {
        guard let dash = typed.lastIndex(of: "-"), let id = Int64(typed[typed.index(after: dash)...]), id > 0,
            Lifecycle.shortID(projectSlug: projectSlug, issueID: id) == typed.uppercased()
        else { return nil }
        return id
    }
}
