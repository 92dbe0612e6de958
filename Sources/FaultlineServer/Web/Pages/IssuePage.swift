// /ui/issues/<id>[?event=<occurrence id>]: one issue, one of its occurrences in full (the
// latest unless another is picked), the list of occurrences, and the lifecycle and merge forms.
// POST /ui/issues/<id>/{resolve,resolve-next,ignore,reopen,merge} change it (CSRF checked by WebUI).
import Foundation
import FaultlineProtocol

struct IssuePage {
    let ctx: WebContext
    let requestedID: Int64

    func render() throws -> HTTPResponse {
        guard let issue = try ctx.store.issue(id: requestedID) else { return WebUI.notFound("no such issue") }
        // A merged id resolves to the surviving issue: send the browser there so the URL is canonical.
        if issue.id != requestedID { return WebUI.redirect("/ui/issues/\(issue.id)") }
        guard let project = try ctx.store.projects().first(where: { $0.id == issue.projectID }) else { return WebUI.notFound("no project") }
        let state = try ctx.database.reading { try IssueLifecycle.state($0, issueID: issue.id) }
        let status = state.status.rawValue
        var occurrence: StoredOccurrence?
        if let pick = ctx.request.query["event"] {
            // A link to an occurrence that is not this issue's must not show another one as if it
            // were it. One grouped into an issue since merged into this one is this issue's.
            guard let id = Int64(pick), let o = try ctx.store.occurrence(id: id), let owner = o.issueID,
                try ctx.store.issue(id: owner)?.id == issue.id
            else {
                return WebUI.notFound("no occurrence \(HTML.clip(pick, 40)) in issue \(issue.id)")
            }
            occurrence = o
        } else {
            occurrence = try ctx.stores.issueReads.occurrences(issueID: issue.id, limit: 1, offset: 0).first
        }

        var body = "<h1><span class=\"muted\">\(HTML.esc(Lifecycle.shortID(projectSlug: project.slug, issueID: issue.id)))</span> \(HTML.esc(issue.title))</h1>"
        body += "<div class=\"culprit\">\(HTML.esc(issue.culprit))</div>"
        // The badge only where symbolication applies: events with native frames (a Python or
        // JavaScript event arrives with its names, files and lines already).
        let native = try occurrence.map { try StackExtractor.frames(of: StoredEvent.decode($0.compressedEvent)).frames.contains { $0.buildID != nil } } ?? true
        if native {
            body += issue.symbolicated ? "<span class=\"tag sym\">symbolicated</span>" : "<span class=\"tag unsym\">not symbolicated</span>"
        }
        var detail = ""
        if let r = state.details.inRelease { detail = state.details.inNextRelease ? " in the release after \(r)" : " in \(r)" }
        if let n = state.details.ignoreCount { detail = " for \(n) more events" }
        if let t = state.details.ignoreUntil { detail += " until \(SentryTimestamp.rfc3339(t))" }
        body += "<span class=\"tag\(status == "unresolved" ? "" : " resolved")\">\(HTML.esc(status + detail))</span>"
        if state.regressions > 0 { body += "<span class=\"tag unsym\">regressed \(state.regressions)×</span>" }
        body += actions(issue, status: status)
        body += try triage(issue)
        // Per-issue figures that read many rows of a big issue: reused until it changes (WebQueries.memoized).
        let firstRelease = try ctx.queries.memoized(issue, "first release") { try ctx.queries.firstRelease(issueID: issue.id) }
        let installs = try ctx.queries.memoized(issue, "installs") { try ctx.queries.installs(issueID: issue.id) }
        body += EventSections.dl([
            ("occurrences", String(issue.count)), ("installs affected", String(installs)),
            ("first seen", HTML.time(issue.firstSeen)), ("last seen", HTML.time(issue.lastSeen)),
            ("first release", firstRelease ?? "—"), ("releases", issue.releases.joined(separator: ", "))
        ])
        body += try breakdown(issue)
        if let o = occurrence {
            let event = try StoredEvent.decodeForReading(o)
            body += "<h2>Occurrence <code>\(HTML.esc(o.eventID))</code></h2><p class=\"muted\">\(HTML.time(o.timestamp))"
            body += o.release.map { " · release \(HTML.esc($0))" } ?? ""
            if let trace = TransactionIngest.traceContext(of: event)?.traceID {
                body += " · <a href=\"/ui/projects/\(HTML.q(project.slug))/traces/\(HTML.q(trace))\">trace</a>"
            }
            if let trace = event["contexts"]?["trace"]?["trace_id"]?.stringValue {
                body +=
                    " · <a href=\"/ui/projects/\(HTML.q(project.slug))/logs?trace=\(HTML.q(trace))&around=\(Int64(exactly: o.timestamp.rounded(.down)) ?? 0)\">logs of this session around this time</a>"
            }
            body += "</p>"
            let (older, newer) = try ctx.queries.neighbours(issueID: issue.id, occurrenceID: o.id)
            if older != nil || newer != nil {
                body += "<p class=\"pager\">"
                body += older.map { "<a href=\"/ui/issues/\(issue.id)?event=\($0)\">← older occurrence</a>" } ?? ""
                body += older != nil && newer != nil ? " · " : ""
                body += newer.map { "<a href=\"/ui/issues/\(issue.id)?event=\($0)\">newer occurrence →</a>" } ?? ""
                body += "</p>"
            }
            body += EventSections.message(event)
            body += EventSections.exception(event)
            let sources = ctx.ui.sourceFiles.map(SourceLines.init)
            body +=
                "<h2>Stack (most recent call first)</h2>"
                + StackView.render(
                    event: event, symbolicator: ctx.ui.symbolicator, pending: ctx.ui.reads.settle(EventRenderer.lookups(of: event)), sources: sources)
            body += StackView.chainedExceptions(event: event, symbolicator: ctx.ui.symbolicator, sources: sources)
            body += StackView.threads(event: event, symbolicator: ctx.ui.symbolicator, pending: [], sources: sources)
            body += try AttachmentsSection(ctx: ctx).render(occurrenceID: o.id)
            body += EventSections.user(event)
            body += EventSections.breadcrumbs(event)
            body += EventSections.registers(event)
            body += EventSections.tagsAndContexts(event, projectSlug: project.slug)
            body += EventSections.extra(event)
            body += EventSections.modules(event, files: ctx.ui.debugFiles)
        }
        body += try UserFeedbackSection(ctx: ctx).render(issueID: issue.id, projectID: issue.projectID)
        body += try occurrences(issue)
        return ctx.layout(issue.title, body, project: project)
    }

    func actions(_ issue: IssueRecord, status: String) -> String {
        func button(_ action: String, _ label: String, primary: Bool = false, extra: String = "") -> String {
            "<form method=\"post\" action=\"/ui/issues/\(issue.id)/\(action)\">\(ctx.csrfField)\(extra)<button\(primary ? " class=\"primary\"" : "") type=\"submit\">\(label)</button></form>"
        }
        var out = "<div class=\"actions\">"
        if status == "unresolved" {
            out += button("resolve", "Resolve", primary: true) + button("resolve-next", "Resolve in next release")
            out += button(
                "ignore", "Ignore",
                extra: "<label for=\"for-events\">for events</label><input id=\"for-events\" name=\"events\" inputmode=\"numeric\" size=\"5\">")
        } else {
            out += button("reopen", "Reopen", primary: true)
        }
        out += """
            <form method="post" action="/ui/issues/\(issue.id)/merge">\(ctx.csrfField)<label for="into">Merge into issue</label>
            <input id="into" name="into" inputmode="numeric" size="8" required><button type="submit">Merge</button></form>
            </div>
            """
        return out
    }

    /// Who it is assigned to, and the comments, each with its form.
    func triage(_ issue: IssueRecord) throws -> String {
        let (assignee, comments) = try ctx.database.reading { c in
            (try IssueNotes.assignee(c, issueID: issue.id), try IssueNotes.comments(c, issueID: issue.id))
        }
        var out = "<div class=\"actions\"><form method=\"post\" action=\"/ui/issues/\(issue.id)/assign\">\(ctx.csrfField)"
        out += "<label for=\"assignee\">Assigned to</label><input id=\"assignee\" name=\"assignee\" size=\"16\" value=\"\(HTML.esc(assignee ?? ""))\">"
        out += "<button type=\"submit\">Assign</button></form></div>"
        out += "<h2>Comments</h2>"
        for c in comments {
            out += "<div class=\"comment\"><p class=\"muted\">\(HTML.esc(c.author)) · \(HTML.time(c.created))</p><p>\(HTML.esc(c.text))</p></div>"
        }
        out += "<form method=\"post\" action=\"/ui/issues/\(issue.id)/comment\">\(ctx.csrfField)<label for=\"comment\">Add a comment</label>"
        out += "<textarea id=\"comment\" name=\"text\" rows=\"3\" cols=\"60\" required></textarea><button type=\"submit\">Comment</button></form>"
        return out
    }

    /// Which releases, environments, operating systems and installs the issue's occurrences come
    /// from, most frequent first, with bars (issue 33): over the newest 10,000 occurrences, as
    /// WebQueries.breakdown reads them. Rows stored before occurrences recorded their environment
    /// and OS show as "not recorded".
    func breakdown(_ issue: IssueRecord) throws -> String {
        let (breakdown, of) = try ctx.queries.memoized(issue, "breakdown") { try ctx.queries.breakdown(issueID: issue.id) }
        guard of > 0 else { return "" }
        var out = ""
        for column in WebQueries.BreakdownColumn.allCases {
            guard let values = breakdown[column], !values.isEmpty else { continue }
            out +=
                "<table class=\"breakdown\" data-column=\"\(column.rawValue)\"><thead><tr><th>\(column.label)</th><th>Occurrences</th><th></th></tr></thead><tbody>"
            for (value, count) in values {
                let share = Double(count) / Double(of)
                let shown = value.map { HTML.esc(HTML.clip($0, 60)) } ?? "<span class=\"muted\">not recorded</span>"
                out += "<tr><td title=\"\(HTML.esc(value ?? ""))\">\(shown)</td><td class=\"num\">\(count)</td><td>\(SVGChart.shareBar(share))"
                out += String(format: " %.0f %%", share * 100) + "</td></tr>"
            }
            out += "</tbody></table>"
        }
        return out.isEmpty
            ? ""
            : "<h2>Breakdown <span class=\"muted\">(\(of == 1 ? "its one occurrence" : "newest \(of) occurrences"))</span></h2><div class=\"breakdowns\">" + out
                + "</div>"
    }

    func occurrences(_ issue: IssueRecord) throws -> String {
        let before = Int64(ctx.q("before"))
        let rows = try ctx.queries.occurrences(issueID: issue.id, before: before, limit: 50)
        var out = "<h2>Occurrences</h2><table><thead><tr><th>Event</th><th>Time</th><th>Release</th><th>Install</th></tr></thead><tbody>"
        for o in rows {
            out += "<tr><td><a href=\"/ui/issues/\(issue.id)?event=\(o.id)\"><code>\(HTML.esc(String(o.eventID.prefix(12))))</code></a></td>"
            out += "<td>\(HTML.time(o.timestamp))</td><td>\(HTML.esc(o.release ?? "—"))</td><td>\(HTML.esc(HTML.clip(o.installID ?? "—", 40)))</td></tr>"
        }
        out += "</tbody></table>"
        if rows.count == 50, let last = rows.last {
            out += "<div class=\"pager\"><a href=\"/ui/issues/\(issue.id)?before=\(last.id)\">Older occurrences →</a></div>"
        }
        return out
    }

    func act(_ action: String) throws -> HTTPResponse {
        guard let issue = try ctx.store.issue(id: requestedID) else { return WebUI.notFound("no such issue") }
        switch action {
        case let a where IssueFormActions.statusActions.contains(a):
            guard let change = IssueFormActions.statusChange(a, form: WebUI.form(ctx.request.body)) else { return WebUI.notFound("no such action") }
            try IssueFormActions.setStatus(ctx, issueIDs: [issue.id], change)
        case "assign", "comment":
            let f = WebUI.form(ctx.request.body)
            let now = Date().timeIntervalSince1970
            do {
                if action == "assign" {
                    let raw = f["assignee"]?.trimmingCharacters(in: .whitespaces) ?? ""
                    let name = raw.isEmpty ? nil : try IssueNotes.validateAssignee(raw)
                    try ctx.database.writing { c in try IssueNotes.assign(c, issueID: issue.id, to: name, now: now) }
                } else {
                    let text = try IssueNotes.validateComment(f["text"] ?? "")
                    let author = ctx.session.principal
                    try ctx.database.writing { c in _ = try IssueNotes.comment(c, issueID: issue.id, author: author, text: text, now: now) }
                }
            } catch let e as LifecycleError {
                return WebUI.page(status: 400, WebLayout.errorPage("Not saved", e.description))
            }
        case "merge":
            let f = WebUI.form(ctx.request.body)
            guard let intoID = Int64(f["into"]?.trimmingCharacters(in: .whitespaces) ?? "") else {
                return WebUI.page(status: 400, WebLayout.errorPage("Cannot merge", "no issue with that id"))
            }
            do { try IssueFormActions.merge(ctx, [issue.id], into: intoID) } catch let e as IssueFormActions.Refusal {
                return WebUI.page(status: 400, WebLayout.errorPage("Cannot merge", e.reason))
            }
            return WebUI.redirect("/ui/issues/\(intoID)")
        default: return WebUI.notFound("no such action")
        }
        return WebUI.redirect("/ui/issues/\(issue.id)")
    }
}
