// /ui/projects/<slug>/issues: the issues list. Filters are a plain GET form (works without
// script); pages are keyset cursors (`after=<sort value>_<id>`), so page 500 costs what page 1
// costs, whatever the number of occurrences.
import Foundation

struct IssuesPage {
    let ctx: WebContext
    let project: ProjectRecord

    /// `key:value` terms in the search box (`release:1.2 env:prod disk full`) set the filters they
    /// name (`release:`, `env:`/`environment:`, `is:resolved|unresolved|all`); the other words stay
    /// the title and culprit search. A term wins over the menu's value.
    static func applyTerms(_ q: inout IssueQuery) {
        var words: [Substring] = []
        for word in q.text.split(separator: " ", omittingEmptySubsequences: true) {
            let parts = word.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[1].isEmpty else { words.append(word); continue }
            let value = String(parts[1].prefix(200))
            switch parts[0].lowercased() {
            case "release": q.release = value
            case "env", "environment": q.environment = value
            case "is" where ["resolved", "unresolved", "all"].contains(value): q.status = value
            default: words.append(word)
            }
        }
        q.text = words.joined(separator: " ")
    }

    func query() -> IssueQuery {
        var q = IssueQuery()
        q.sort = IssueQuery.Sort(rawValue: ctx.q("sort")) ?? .lastSeen
        if ["resolved", "unresolved", "all"].contains(ctx.q("status")) { q.status = ctx.q("status") }
        q.release = String(ctx.q("release").prefix(200))
        q.environment = String(ctx.q("environment").prefix(200))
        q.text = String(ctx.q("q").prefix(200))
        Self.applyTerms(&q)
        let a = ctx.q("after").split(separator: "_")
        if a.count == 2, let v = Double(a[0]), let id = Int64(a[1]) { q.after = (v, id) }
        return q
    }

    func render() throws -> HTTPResponse {
        let q = query()
        let rows = try ctx.queries.issues(projectID: project.id, q)
        let slug = HTML.q(project.slug)
        func option(_ value: String, _ label: String, _ current: String) -> String {
            "<option value=\"\(HTML.esc(value))\"\(value == current ? " selected" : "")>\(HTML.esc(label))</option>"
        }
        var filters = "<form class=\"filters\" method=\"get\" action=\"/ui/projects/\(slug)/issues\">"
        filters += "<input type=\"search\" name=\"q\" placeholder=\"search: words, release:1.2 env:prod is:resolved\" value=\"\(HTML.esc(q.text))\">"
        filters +=
            "<select name=\"status\">" + option("unresolved", "Unresolved", q.status) + option("resolved", "Resolved", q.status)
            + option("all", "All", q.status) + "</select>"
        filters += "<select name=\"release\">" + option("", "All releases", q.release)
        for r in try ctx.queries.releases(projectID: project.id) { filters += option(r, r, q.release) }
        filters += "</select><select name=\"environment\">" + option("", "All environments", q.environment)
        for e in try ctx.queries.environments() { filters += option(e, e, q.environment) }
        filters +=
            "</select><select name=\"sort\">" + option("last_seen", "Last seen", q.sort.rawValue) + option("first_seen", "First seen", q.sort.rawValue)
            + option("count", "Most occurrences", q.sort.rawValue) + "</select><button type=\"submit\">Apply</button></form>"

        var body = "<h1>Issues · \(HTML.esc(project.name))</h1>" + filters
        body +=
            "<table class=\"issues\"><thead><tr><th>Issue</th><th>Occurrences</th><th>Installs</th><th>Last \(WebQueries.sparkDays) days</th><th>First seen</th><th>Last seen</th><th>Releases</th></tr></thead><tbody>"
        let native = try ctx.queries.needSymbolication(rows.map(\.issue.id))
        for row in rows {
            let i = row.issue
            // The badge only where symbolication applies (WebQueries.needSymbolication).
            let sym =
                !native.contains(i.id)
                ? "" : i.symbolicated ? "<span class=\"tag sym\">symbolicated</span>" : "<span class=\"tag unsym\">not symbolicated</span>"
            let status = row.status == "resolved" ? " <span class=\"tag resolved\">resolved</span>" : ""
            let releases = i.releases.prefix(4).map { "<span class=\"tag\">\(HTML.esc(HTML.clip($0, 40)))</span>" }.joined() + (i.releases.count > 4 ? "…" : "")
            body += """
                <tr class="issue"><td class="title"><a href="/ui/issues/\(i.id)">\(HTML.esc(HTML.clip(i.title, 160)))</a>\(status)
                <div class="culprit">\(HTML.esc(HTML.clip(i.culprit, 200)))</div>\(sym)</td>
                <td class="num">\(i.count)</td><td class="num">\(row.installs)</td><td>\(SVGChart.sparkline(row.perDay))</td>
                <td title="\(HTML.time(i.firstSeen))">\(HTML.ago(i.firstSeen))</td><td title="\(HTML.time(i.lastSeen))">\(HTML.ago(i.lastSeen))</td><td>\(releases)</td></tr>
                """
        }
        if rows.isEmpty { body += "<tr><td colspan=\"7\" class=\"muted\">No issues match.</td></tr>" }
        body += "</tbody></table>"
        if rows.count == q.limit, let last = rows.last {
            var link = "/ui/projects/\(slug)/issues?sort=\(q.sort.rawValue)&status=\(HTML.q(q.status))&release=\(HTML.q(q.release))"
            link += "&environment=\(HTML.q(q.environment))&q=\(HTML.q(q.text))&after=\(HTML.q("\(last.sortValue)_\(last.issue.id)"))"
            body +=
                "<div class=\"pager\"><a href=\"/ui/projects/\(slug)/issues\">First page</a><a rel=\"next\" href=\"\(HTML.esc(link))\">Next page →</a></div>"
        }
        return ctx.layout("Issues", body, project: project)
    }
}
