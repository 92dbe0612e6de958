// What users wrote about an issue's events (UserFeedback/), on the issue page: newest first, each
// with who wrote it (name and email, as they typed them), when, the page it was sent from, and
// a link to the occurrence it is about. All of it is the user's text, escaped.
import Foundation

struct UserFeedbackSection {
    let ctx: WebContext

    func render(issueID: Int64, projectID: Int64) throws -> String {
        let reads = UserFeedbackReads(store: ctx.store, database: ctx.database)
        let list = try reads.about(issueID: issueID, projectID: projectID)
        guard !list.isEmpty else { return "" }
        var out = "<h2>User feedback (\(list.count))</h2><ol class=\"feedback\">"
        for f in list.prefix(50) {
            let who = [f.name, f.email.isEmpty ? "" : "<\(f.email)>"].filter { !$0.isEmpty }.joined(separator: " ")
            out += "<li><blockquote>\(HTML.esc(f.comments))</blockquote><p class=\"muted\">\(HTML.esc(who.isEmpty ? "anonymous" : who))"
            out += " · \(HTML.esc(EventSections.timestamp(.double(f.received))))"
            if let url = f.url { out += " · from \(HTML.esc(HTML.clip(url, 120)))" }
            if let e = f.eventID, let o = try ctx.store.occurrence(projectID: projectID, eventID: e) {
                out += " · <a href=\"/ui/issues/\(issueID)?event=\(o.id)\">its occurrence</a>"
            }
            out += "</p></li>"
        }
        return out + "</ol>"
    }
}
