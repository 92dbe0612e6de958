// What the pages' issue forms do, in one place for the issue page (one issue) and the issues list
// (the rows ticked): which status a button sets, and when issues may be merged. Both go through the
// lifecycle's one rule (`IssueLifecycle.set`) and the merger's (`IssueMerger`), as the API does.
import Foundation

enum IssueFormActions {
    /// The status buttons, by the name a form posts (`action=` or the issue page's path).
    static let statusActions = ["resolve", "resolve-next", "ignore", "reopen"]

    /// The status and details a button sets; nil for a name that is no status button. `ignore`
    /// takes the form's `events` (ignore until that many more events) when it is a positive number.
    static func statusChange(_ action: String, form: [String: String]) -> (IssueStatus, IssueStatusDetails)? {
        guard statusActions.contains(action) else { return nil }
        var details = IssueStatusDetails()
        let status: IssueStatus = action == "reopen" ? .unresolved : action == "ignore" ? .ignored : .resolved
        if action == "resolve-next" { details.inNextRelease = true }
        if action == "ignore", let n = Int64(form["events"]?.trimmingCharacters(in: .whitespaces) ?? ""), n > 0 { details.ignoreCount = n }
        return (status, details)
    }

    /// Sets the status on live issues (ids merged away count as the issue they went into), in one
    /// transaction.
    static func setStatus(_ ctx: WebContext, issueIDs: [Int64], _ change: (IssueStatus, IssueStatusDetails)) throws {
        let live = try Set(issueIDs.compactMap { try ctx.store.issue(id: $0)?.id }).sorted()
        let now = Date().timeIntervalSince1970
        try ctx.database.writing { c in try IssueLifecycle.set(c, issueIDs: live, status: change.0, details: change.1, now: now) }
    }

    /// Why a merge cannot be done, said to the person who asked for it.
    struct Refusal: Error { let reason: String }

    /// Merges `sources` into `target`: every one a live issue of the target's project, none the
    /// target itself. Checks all before changing any, so a refused merge changes nothing.
    static func merge(_ ctx: WebContext, _ sources: [Int64], into targetID: Int64) throws {
        guard let target = try ctx.store.issue(id: targetID), target.id == targetID, target.mergedInto == nil else {
            throw Refusal(reason: "no issue with that id")
        }
        var live: [Int64] = []
        for id in sources {
            guard let issue = try ctx.store.issue(id: id), issue.id == id else { throw Refusal(reason: "issue \(id) does not exist or was merged already") }
            guard issue.id != target.id, issue.projectID == target.projectID else {
                throw Refusal(reason: "pick another issue of the same project")
            }
            if !live.contains(id) { live.append(id) }
        }
        guard !live.isEmpty else { throw Refusal(reason: "pick at least one issue to merge") }
        for id in live { try ctx.queries.merge(id, into: target.id) }
    }

    /// The issue a merge by selection keeps: the one with the most occurrences (the oldest on a
    /// tie), as Sentry keeps its biggest group.
    static func mergeTarget(_ ctx: WebContext, among ids: [Int64]) throws -> Int64? {
        let issues = try ids.compactMap { try ctx.store.issue(id: $0) }.filter { $0.mergedInto == nil }
        return issues.max { ($0.count, -$0.id) < ($1.count, -$1.id) }?.id
    }
}
