// /ui/projects/<slug>/issues: the issues list. Filters are a plain GET form (works without
// script); pages are keyset cursors (`after=<sort value>_<id>` forwards, `before=` back), so
// page 500 costs what page 1 costs, whatever the number of occurrences. One row more than a page
// is read, so "next" is offered only when a row follows. The rows sit in a second form: tick some and a
// button resolves, ignores, reopens or merges them (POST, CSRF checked by WebUI, then a redirect
// back to the same list: POST-redirect-GET).
import Foundation

struct IssuesPage {
    let ctx: WebContext
    let project: ProjectRecord

    /// Where a pager link starts: after a row (forwards) or before one (backwards).
    enum Cursor {
        case after(IssueRow), before(IssueRow)
    }

    /// This list with `q`'s filters, sort and search: every link the list makes of itself, so
    /// none drops a filter. From its first page, or from `cursor`.
    func link(_ q: IssueQuery, _ cursor: Cursor? = nil) -> String {
        var link = "/ui/projects/\(HTML.q(project.slug))/issues?sort=\(q.sort.rawValue)&status=\(HTML.q(q.status))&release=\(HTML.q(q.release))"
        link += "&environment=\(HTML.q(q.environment))&q=\(HTML.q(q.searchText))"
        switch cursor {
        case .after(let row): link += "&after=" + HTML.q("\(row.sortValue)_\(row.issue.id)")
        case .before(let row): link += "&before=" + HTML.q("\(row.sortValue)_\(row.issue.id)")
        case nil: break
        }
        return link
    }

    func query() -> IssueQuery {
        var q = IssueQuery()
        q.sort = IssueQuery.Sort(rawValue: ctx.q("sort")) ?? .lastSeen
        if IssueQuery.statuses.contains(ctx.q("status")) { q.status = ctx.q("status") }
        q.release = String(ctx.q("release").prefix(200))
        q.environment = String(ctx.q("environment").prefix(200))
        q.text = String(ctx.q("q").prefix(200))
        _ = q.applyTerms()
        q.after = IssueSearchRequest.position(ctx.q("after"))
        if q.after == nil { q.before = IssueSearchRequest.position(ctx.q("before")) }
        return q
    }

    /// One page of rows, newest sort value first, and whether rows lie beyond it either way. One
    /// row past the page is read to know whether another page follows in the reading direction;
    /// the other direction has rows when a cursor brought us here.
    func page(_ q: IssueQuery) throws -> (rows: [IssueRow], hasPrevious: Bool, hasNext: Bool) {
        var probe = q
        probe.limit = q.limit + 1
        let read = try ctx.queries.issues(projectID: project.id, probe)
        let beyond = read.count > q.limit
        let rows = Array(read.prefix(q.limit))
        if q.before != nil { return (rows.reversed(), beyond, true) }
        return (rows, q.after != nil, beyond)
    }

    func render() throws -> HTTPResponse {
        if let issuePage = try IssueJump.target(ctx.q("q"), project: project, store: ctx.store) { return WebUI.redirect(issuePage) }
        let q = query()
        let (rows, hasPrevious, hasNext) = try page(q)
        let slug = HTML.q(project.slug)
        func option(_ value: String, _ label: String, _ current: String) -> String {
            "<option value=\"\(HTML.esc(value))\"\(value == current ? " selected" : "")>\(HTML.esc(label))</option>"
        }
        var filters = "<form class=\"filters\" method=\"get\" action=\"/ui/projects/\(slug)/issues\">"
        filters +=
            "<input type=\"search\" name=\"q\" placeholder=\"search: words, release:1.2 env:prod os:Linux key:value is:resolved\" value=\"\(HTML.esc(q.searchText))\">"
        filters +=
            "<select name=\"status\">" + option("unresolved", "Unresolved", q.status) + option("resolved", "Resolved", q.status)
            + option("ignored", "Ignored", q.status) + option("all", "All", q.status) + "</select>"
        filters += "<select name=\"release\">" + option("", "All releases", q.release)
        for r in try ctx.queries.releases(projectID: project.id) { filters += option(r, r, q.release) }
        filters += "</select><select name=\"environment\">" + option("", "All environments", q.environment)
        for e in try ctx.queries.environments(projectID: project.id) { filters += option(e, e, q.environment) }
        filters +=
            "</select><select name=\"sort\">" + option("last_seen", "Last seen", q.sort.rawValue) + option("first_seen", "First seen", q.sort.rawValue)
            + option("count", "Most occurrences", q.sort.rawValue) + "</select><button type=\"submit\">Apply</button></form>"
        if !q.notApplied.isEmpty {
            filters +=
                "<p class=\"notice\">Not applied (this server's search has release:, env:, is:, key:value tags, words and \"phrases\"): "
                + HTML.esc(q.notApplied.joined(separator: " ")) + "</p>"
        }

        var body = "<h1>Issues · \(HTML.esc(project.name))</h1>" + filters + notice()
        // The rows' form posts to this very list (its query string), which the redirect returns to.
        body += "<form class=\"bulk\" method=\"post\" action=\"\(HTML.esc(link(q)))\">\(ctx.csrfField)<div class=\"actions bulk-actions\">"
        body += "<span class=\"muted\">Ticked issues:</span>"
        for (action, label) in [("resolve", "Resolve"), ("resolve-next", "Resolve in next release"), ("ignore", "Ignore"), ("reopen", "Reopen")] {
            body += "<button type=\"submit\" name=\"action\" value=\"\(action)\">\(label)</button>"
        }
        body += "<button type=\"submit\" name=\"action\" value=\"merge\" title=\"into the ticked issue with the most occurrences\">Merge</button></div>"
        body +=
            "<table class=\"issues\"><thead><tr><th class=\"pick\"><span class=\"muted\">✓</span></th><th>Issue</th><th>Occurrences</th><th>Installs</th><th>Last \(WebQueries.sparkDays) days</th><th>First seen</th><th>Last seen</th><th>Releases</th></tr></thead><tbody>"
        let native = try ctx.queries.needSymbolication(rows.map(\.issue.id))
        for row in rows {
            let i = row.issue
            // The badge only where symbolication applies (WebQueries.needSymbolication).
            let sym =
                !native.contains(i.id)
                ? "" : i.symbolicated ? "<span class=\"tag sym\">symbolicated</span>" : "<span class=\"tag unsym\">not symbolicated</span>"
            let status = row.status == "unresolved" ? "" : " <span class=\"tag \(HTML.esc(row.status))\">\(HTML.esc(row.status))</span>"
            let releases = i.releases.prefix(4).map { "<span class=\"tag\">\(HTML.esc(HTML.clip($0, 40)))</span>" }.joined() + (i.releases.count > 4 ? "…" : "")
            body += """
                <tr class="issue"><td class="pick"><input type="checkbox" name="issue" value="\(i.id)" aria-label="select issue \(i.id)"></td><td class="title"><a href="/ui/issues/\(i.id)">\(HTML.esc(HTML.clipTitle(i.title, culprit: i.culprit, 160)))</a>\(status)
                <div class="culprit">\(HTML.esc(HTML.clip(i.culprit, 200)))</div>\(sym)</td>
                <td class="num">\(i.count)</td><td class="num">\(row.installs)</td><td>\(SVGChart.sparkline(row.perDay))</td>
                <td title="\(HTML.time(i.firstSeen))">\(HTML.ago(i.firstSeen))</td><td title="\(HTML.time(i.lastSeen))">\(HTML.ago(i.lastSeen))</td><td>\(releases)</td></tr>
                """
        }
        if rows.isEmpty { body += "<tr><td colspan=\"8\" class=\"muted\">No issues match.</td></tr>" }
        body += "</tbody></table></form>"
        body += pager(q, rows: rows, hasPrevious: hasPrevious, hasNext: hasNext)
        return ctx.layout("Issues", body, project: project)
    }

    /// Links to the first, previous and next pages, each only where it leads to rows, each
    /// keeping the list's filters.
    func pager(_ q: IssueQuery, rows: [IssueRow], hasPrevious: Bool, hasNext: Bool) -> String {
        var links: [String] = []
        if q.after != nil || q.before != nil { links.append("<a rel=\"first\" href=\"\(HTML.esc(link(q)))\">First page</a>") }
        if hasPrevious, let first = rows.first { links.append("<a rel=\"prev\" href=\"\(HTML.esc(link(q, .before(first))))\">← Previous page</a>") }
        if hasNext, let last = rows.last { links.append("<a rel=\"next\" href=\"\(HTML.esc(link(q, .after(last))))\">Next page →</a>") }
        return links.isEmpty ? "" : "<div class=\"pager\">" + links.joined() + "</div>"
    }

    /// What the last bulk action did, from the redirect's `done`, `n` and `into` (only known names
    /// and numbers are shown).
    func notice() -> String {
        guard let n = Int(ctx.q("n")), n > 0 else { return "" }
        let issues = n == 1 ? "1 issue" : "\(n) issues"
        switch ctx.q("done") {
        case "resolve", "resolve-next": return "<p class=\"notice\">\(issues) resolved.</p>"
        case "ignore": return "<p class=\"notice\">\(issues) ignored.</p>"
        case "reopen": return "<p class=\"notice\">\(issues) reopened.</p>"
        case "merge":
            guard let into = Int64(ctx.q("into")) else { return "" }
            return "<p class=\"notice\">\(issues) merged into <a href=\"/ui/issues/\(into)\">issue \(into)</a>.</p>"
        default: return ""
        }
    }

    /// POST: the ticked rows (`issue`, repeated) and the button pressed (`action`). Every id must be
    /// an issue of this project; a status button applies to all, Merge keeps the ticked issue with
    /// the most occurrences and merges the others into it. Then back to the same list (303).
    func act() throws -> HTTPResponse {
        let pairs = WebUI.formPairs(ctx.request.body)
        let form = WebUI.form(ctx.request.body)
        var ids: [Int64] = []
        for (key, value) in pairs where key == "issue" {
            guard let id = Int64(value), let issue = try ctx.store.issue(id: id), issue.projectID == project.id else {
                return WebUI.page(status: 400, WebLayout.errorPage("Not changed", "no issue \(value) in this project"))
            }
            if !ids.contains(issue.id) { ids.append(issue.id) }
            if ids.count > LifecycleAPI.maxBulkIDs { return WebUI.page(status: 400, WebLayout.errorPage("Not changed", "too many issues at once")) }
        }
        guard !ids.isEmpty else { return WebUI.page(status: 400, WebLayout.errorPage("Not changed", "tick at least one issue")) }
        let action = form["action"] ?? ""
        let back = link(query())
        if let change = IssueFormActions.statusChange(action, form: form) {
            try IssueFormActions.setStatus(ctx, issueIDs: ids, change)
            return WebUI.redirect(back + "&done=\(action)&n=\(ids.count)")
        }
        guard action == "merge" else { return WebUI.notFound("no such action") }
        guard ids.count >= 2, let target = try IssueFormActions.mergeTarget(ctx, among: ids) else {
            return WebUI.page(status: 400, WebLayout.errorPage("Cannot merge", "tick two or more issues to merge"))
        }
        do { try IssueFormActions.merge(ctx, ids.filter { $0 != target }, into: target) } catch let e as IssueFormActions.Refusal {
            return WebUI.page(status: 400, WebLayout.errorPage("Cannot merge", e.reason))
        }
        return WebUI.redirect(back + "&done=merge&n=\(ids.count - 1)&into=\(target)")
    }
}
