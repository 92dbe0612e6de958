// /ui/projects: every project with its counts (grouped occurrences, from the issues' counts) and
// crash-free rate, linking to its pages.
import Foundation

struct ProjectsPage {
    let ctx: WebContext

    func render() throws -> HTTPResponse {
        var rows = ""
        for p in try ctx.store.projects() {
            let c = try ctx.queries.projectSummary(projectID: p.id)
            let rate = c.sessions > 0 ? String(format: "%.2f %%", 100 * (1 - Double(c.crashed) / Double(c.sessions))) : "—"
            let slug = HTML.q(p.slug)
            rows += """
                <tr><td class="title"><a href="/ui/projects/\(slug)/issues">\(HTML.esc(p.name))</a> <span class="muted">\(HTML.esc(p.slug))</span></td>
                <td class="num">\(c.issues)</td><td class="num">\(c.occurrences)</td><td class="num">\(rate)</td>
                <td><a href="/ui/projects/\(slug)/health">health</a> · <a href="/ui/projects/\(slug)/logs">logs</a></td></tr>
                """
        }
        let body = """
            <h1>Projects</h1>
            <table><thead><tr><th>Project</th><th>Issues</th><th>Occurrences</th><th>Crash-free sessions</th><th></th></tr></thead><tbody>\(rows)</tbody></table>
            """
        return ctx.layout("Projects", body)
    }
}
