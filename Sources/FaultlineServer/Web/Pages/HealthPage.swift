// /ui/projects/<slug>/health: crash-free session rate per release and environment, from the
// `session`/`sessions` items the SDKs send, with a bar chart. One view reads at most the newest
// 20,000 items of each type and 32 MiB, streamed, and passes over items larger than the
// crash-free alert reads (ReleaseHealth.maxItemBytes), so the page and the alert agree.
import Foundation
import FaultlineProtocol

struct HealthPage {
    let ctx: WebContext
    let project: ProjectRecord
    static let scanLimit = 20_000
    static let scanBytes = 32 * 1024 * 1024

    typealias Bucket = SessionTally

    /// The tallies, and whether older items were left unread (the page says so).
    func aggregate() throws -> (tally: [String: [String: Bucket]], cut: Bool) {
        var reading = SessionReading()
        var cut = false
        for type in ["session", "sessions"] {
            let stoppedAt = try ctx.queries.scanItems(
                projectID: project.id, type: type, before: nil, maxItems: Self.scanLimit, maxBytes: Self.scanBytes,
                maxItemBytes: ReleaseHealth.maxItemBytes
            ) { _, _, payload in reading.add(type: type, payload: payload) }
            cut = cut || stoppedAt != nil
        }
        return (reading.tally, cut)
    }

    func render() throws -> HTTPResponse {
        let (data, cut) = try aggregate()
        var rows: [(String, String, Bucket)] = []
        for (rel, envs) in data { for (env, b) in envs where b.started > 0 { rows.append((rel, env, b)) } }
        rows.sort { ($0.0, $0.1) > ($1.0, $1.1) }
        let rates = rows.map { $0.2.crashFreeRate ?? 1 }  // the one rule (SessionTally): never below 0
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
        if cut { body += "<p class=\"muted\">From the newest session items only; older ones are not counted here.</p>" }
        body += try losses()
        return ctx.layout("Release health", body, project: project)
    }

    /// What the SDKs reported losing before sending (their client reports), by reason and kind.
    func losses() throws -> String {
        let (tally, partial) = try ClientReportTally.read(ctx.queries, projectID: project.id, since: nil)
        guard !tally.quantities.isEmpty else { return "" }
        var html = "<h2>Lost by the SDKs before sending</h2><table class=\"health\"><thead><tr><th>Why</th><th>What</th><th>How many</th></tr></thead><tbody>"
        for k in tally.quantities.keys.sorted() {
            html += "<tr><td>\(HTML.esc(k.reason))</td><td>\(HTML.esc(k.category))</td><td class=\"num\">\(tally.quantities[k] ?? 0)</td></tr>"
        }
        html += "</tbody></table>"
        if partial { html += "<p class=\"muted\">From the newest client reports only.</p>" }
        return html
    }
}
