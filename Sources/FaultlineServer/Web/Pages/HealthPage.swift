// /ui/projects/<slug>/health: crash-free session rate per release and environment, from the
// `session`/`sessions` items the SDKs send (the most recent 20,000 items), with a bar chart.
import Foundation
import FaultlineProtocol

struct HealthPage {
    let ctx: WebContext
    let project: ProjectRecord
    static let scanLimit = 20_000

    typealias Bucket = SessionTally

    func aggregate() throws -> [String: [String: Bucket]] {
        var out: [String: [String: Bucket]] = [:]
        for type in ["session", "sessions"] {
            for item in try ctx.queries.items(projectID: project.id, type: type, before: nil, limit: Self.scanLimit) {
                ReleaseHealth.add(type: type, payload: item.payload, into: &out)
            }
        }
        return out
    }

    func render() throws -> HTTPResponse {
        let data = try aggregate()
        var rows: [(String, String, Bucket)] = []
        for (rel, envs) in data { for (env, b) in envs where b.started > 0 { rows.append((rel, env, b)) } }
        rows.sort { ($0.0, $0.1) > ($1.0, $1.1) }
        let rates = rows.map { 1 - Double($0.2.crashed) / Double($0.2.started) }
        var body = "<h1>Release health · \(HTML.esc(project.name))</h1>"
        if rows.isEmpty {
            body += "<p class=\"muted\">No sessions yet. The SDK sends them when release health is on.</p>"
        } else {
            body +=
                "<table class=\"health\"><thead><tr><th>Release</th><th>Environment</th><th>Sessions</th><th>Crashed</th><th>Crash-free</th><th></th></tr></thead><tbody>"
            for (i, (rel, env, b)) in rows.enumerated() {
                body += "<tr><td>\(HTML.esc(rel))</td><td>\(HTML.esc(env))</td><td class=\"num\">\(b.started)</td><td class=\"num\">\(b.crashed)</td>"
                body += "<td class=\"num\">" + String(format: "%.2f %%", rates[i] * 100) + "</td><td>\(SVGChart.rateBars([rates[i]]))</td></tr>"
            }
            body += "</tbody></table>"
        }
        return ctx.layout("Release health", body, project: project)
    }
}
