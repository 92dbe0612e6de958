// /ui/debug-files: what the server holds, who uploaded it, and what its backfill did: state
// (refreshing itself every 2 s while one runs, with a meta refresh, not script), progress,
// issues merged, and the issues whose stacks go through the file.
import Foundation
import FaultlineProtocol

struct DebugFilesPage {
    let ctx: WebContext

    func render() throws -> HTTPResponse {
        let files = try ctx.stores.debugFiles.debugFiles().reversed()
        let uploaders = try ctx.queries.uploaders()
        var live = false
        var body =
            "<h1>Debug files</h1><table><thead><tr><th>File</th><th>Build-id</th><th>Size</th><th>Contents</th><th>Uploaded</th><th>Backfill</th><th>Issues it makes readable</th></tr></thead><tbody>"
        for d in files {
            let kinds = [d.hasDebugInfo ? "DWARF" : nil, d.hasSymbols ? "symbols" : nil, d.isExecutable ? "code" : nil].compactMap { $0 }
            let who = uploaders[d.buildID.hex].map { " by \(HTML.esc($0.tokenName))" } ?? ""
            var backfill = ""
            switch ctx.ui.backfiller.progress(of: d.buildID) {
            case .queued: backfill = "<span class=\"tag\" data-state=\"queued\">queued</span>"; live = true
            case .running:
                live = true
                backfill = "<span class=\"tag\" data-state=\"running\">running</span>"
                if let b = try ctx.stores.backfills.latestBackfill(buildID: d.buildID), b.occurrences > 0 {
                    let pct = Int(min(100, 100 * b.occurrencesDone / max(b.occurrences, 1)) / 10 * 10)
                    backfill += " <span class=\"progress\"><span class=\"p\(pct)\"></span></span> \(b.occurrencesDone)/\(b.occurrences)"
                }
            case .idle:
                if let b = try ctx.stores.backfills.latestBackfill(buildID: d.buildID) {
                    backfill =
                        "<span class=\"tag \(b.state == "done" ? "sym" : (b.state == "failed" ? "unsym" : ""))\" data-state=\"\(HTML.esc(b.state))\">backfill \(HTML.esc(b.state))</span>"
                    backfill += "<div class=\"muted\">\(b.occurrencesSymbolicated) of \(b.occurrences) occurrences symbolicated"
                    backfill += b.finished.map { String(format: " in %.2f s", $0 - b.started) } ?? ""
                    if !b.merges.isEmpty {
                        backfill +=
                            "; merged " + b.merges.prefix(10).map { "<a href=\"/ui/issues/\($0.into)\">#\($0.issue)→#\($0.into)</a>" }.joined(separator: " ")
                    }
                    backfill += "</div>"
                    if let e = b.error { backfill += "<div class=\"error\">\(HTML.esc(e))</div>" }
                } else {
                    backfill = "<span class=\"muted\">none</span>"
                }
            }
            let issues = try ctx.queries.issues(referencing: d.buildID.hex, limit: 5)
            let issueLinks = issues.map { "<div><a href=\"/ui/issues/\($0.id)\">\(HTML.esc(HTML.clip($0.title, 80)))</a></div>" }.joined()
            body += """
                <tr class="debug-file"><td>\(HTML.esc(d.name))</td><td><code>\(HTML.esc(d.buildID.hex))</code></td><td class="num">\(HTML.bytes(d.size))</td>
                <td>\(kinds.joined(separator: ", "))</td><td>\(HTML.time(d.uploaded))\(who)</td><td class="backfill">\(backfill)</td><td>\(issueLinks)</td></tr>
                """
        }
        if files.isEmpty { body += "<tr><td colspan=\"7\" class=\"muted\">No debug files yet: <code>faultline upload --wait PATH</code>.</td></tr>" }
        body += "</tbody></table>"
        var r = ctx.layout("Debug files", body)
        if live { r.headers.append(("Refresh", "2")) }
        return r
    }
}
