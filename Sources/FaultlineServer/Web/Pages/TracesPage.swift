// /ui/projects/<slug>/traces: the transactions of a project grouped by name (count, duration
// p50/p95, share that failed, last seen), filtered by name text, status and period. It groups the
// newest `scanned` transactions that match, so a view costs the same whatever the table holds;
// the page says when the groups cover only those. `?name=<exact name>` lists that name's recent
// traces instead, each linking to its trace page.
import Foundation

struct TracesPage {
    let ctx: WebContext
    let project: ProjectRecord
    /// Transactions read per view of the grouped list.
    static let scanned = 5000
    /// Traces listed per page for one name.
    static let perPage = 50
    static let periods: [(value: String, label: String, seconds: Double?)] = [
        ("1h", "Last hour", 3600), ("24h", "Last 24 hours", 86400), ("7d", "Last 7 days", 7 * 86400), ("30d", "Last 30 days", 30 * 86400),
        ("all", "All time", nil)
    ]
    static let statuses: [(value: String, label: String)] = [("", "Any status"), ("ok", "ok"), ("error", "failed (not ok)")]

    var slug: String { HTML.q(project.slug) }

    func render() throws -> HTTPResponse {
        guard let traces = ctx.stores.traces else { return WebUI.notFound("this store keeps no traces") }
        if !ctx.q("name").isEmpty { return try byName(traces, String(ctx.q("name").prefix(500))) }
        let text = String(ctx.q("q").prefix(200))
        let status = Self.statuses.contains { $0.value == ctx.q("status") } ? ctx.q("status") : ""
        let period = Self.periods.first { $0.value == ctx.q("period") } ?? Self.periods[2]
        let since = period.seconds.map { Date().timeIntervalSince1970 - $0 } ?? 0
        let rows = try ctx.queries.transactionRows(projectID: project.id, since: since, text: text, status: status, limit: Self.scanned)
        let groups = TransactionGroup.grouped(rows)

        func option(_ value: String, _ label: String, _ current: String) -> String {
            "<option value=\"\(HTML.esc(value))\"\(value == current ? " selected" : "")>\(HTML.esc(label))</option>"
        }
        var body = "<h1>Traces · \(HTML.esc(project.name))</h1>"
        body += "<form class=\"filters\" method=\"get\" action=\"/ui/projects/\(slug)/traces\">"
        body += "<input type=\"search\" name=\"q\" placeholder=\"transaction name\" value=\"\(HTML.esc(text))\">"
        body += "<select name=\"status\">" + Self.statuses.map { option($0.value, $0.label, status) }.joined() + "</select>"
        body += "<select name=\"period\">" + Self.periods.map { option($0.value, $0.label, period.value) }.joined() + "</select>"
        body += "<button type=\"submit\">Apply</button></form>"
        if rows.count == Self.scanned {
            body += "<p class=\"muted\">Grouped over the newest \(Self.scanned) matching transactions; narrow the period or name for the rest.</p>"
        }
        body +=
            "<table class=\"transactions\"><thead><tr><th>Transaction</th><th class=\"num\">Count</th><th class=\"num\">p50</th><th class=\"num\">p95</th><th class=\"num\">Failed</th><th>Last seen</th><th>Latest trace</th></tr></thead><tbody>"
        for g in groups {
            let failed = g.count == 0 ? 0 : Double(g.errors) / Double(g.count)
            body += "<tr class=\"transaction\"><td class=\"title\"><a href=\"/ui/projects/\(slug)/traces?name=\(HTML.q(g.name))\">"
            body += "\(HTML.esc(HTML.clip(g.name, 160)))</a></td><td class=\"num\">\(g.count)</td>"
            body += "<td class=\"num\">\(Self.duration(g.p50))</td><td class=\"num\">\(Self.duration(g.p95))</td>"
            body += "<td class=\"num\(g.errors > 0 ? " lvl-error" : "")\">\(String(format: "%.1f", failed * 100)) %</td>"
            body += "<td title=\"\(HTML.time(g.lastSeen))\">\(HTML.ago(g.lastSeen))</td>"
            body += "<td><a href=\"/ui/projects/\(slug)/traces/\(HTML.q(g.latestTrace))\">"
            body += "<code>\(HTML.esc(String(g.latestTrace.prefix(8))))</code></a></td></tr>"
        }
        if groups.isEmpty { body += "<tr><td colspan=\"7\" class=\"muted\">No transactions match.</td></tr>" }
        body += "</tbody></table>"
        return ctx.layout("Traces", body, project: project)
    }

    /// The recent traces of one transaction name, newest first, paged by offset.
    func byName(_ traces: TraceStore, _ name: String) throws -> HTTPResponse {
        let offset = min(max(Int(ctx.q("offset")) ?? 0, 0), 1_000_000)
        let list = try traces.recentTransactions(projectID: project.id, name: name, status: nil, limit: Self.perPage, offset: offset)
        var body = "<h1>Traces · \(HTML.esc(HTML.clip(name, 200)))</h1>"
        body += "<p class=\"muted\"><a href=\"/ui/projects/\(slug)/traces\">all transactions</a></p>"
        body +=
            "<table class=\"transactions\"><thead><tr><th>Trace</th><th>Started</th><th class=\"num\">Duration</th><th>Status</th><th class=\"num\">Spans</th></tr></thead><tbody>"
        for t in list {
            let status = t.status ?? "ok"
            body += "<tr><td><a href=\"/ui/projects/\(slug)/traces/\(HTML.q(t.traceID))\"><code>\(HTML.esc(t.traceID))</code></a></td>"
            body += "<td>\(HTML.time(t.start))</td><td class=\"num\">\(Self.duration(t.end - t.start))</td>"
            body += "<td class=\"\(status == "ok" ? "" : "lvl-error")\">\(HTML.esc(status))</td><td class=\"num\">\(t.spanCount)</td></tr>"
        }
        if list.isEmpty { body += "<tr><td colspan=\"5\" class=\"muted\">No traces of this name.</td></tr>" }
        body += "</tbody></table>"
        if list.count == Self.perPage {
            body +=
                "<div class=\"pager\"><a rel=\"next\" href=\"/ui/projects/\(slug)/traces?name=\(HTML.q(name))&amp;offset=\(offset + Self.perPage)\">Older →</a></div>"
        }
        return ctx.layout("Traces", body, project: project)
    }

    /// Seconds as the pages show a duration: milliseconds below ten seconds, else seconds.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "—" }
        if seconds < 10 { return String(format: "%.1f ms", seconds * 1000) }
        return String(format: "%.2f s", seconds)
    }
}
