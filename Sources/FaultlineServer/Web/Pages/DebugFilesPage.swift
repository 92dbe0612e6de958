// /ui/debug-files: what the server holds, who uploaded it, and what its backfill did: state
// (refreshing itself every 2 s while one runs, with a Refresh header, not script), progress,
// issues merged, and the issues whose stacks go through the file. Each file is named by its binary
// (the module's file name as events name it; the uploaded name when no event does), the build-id
// beneath; the table wraps to fit a 1,400 px window. /ui/debug-files/<build-id> lists every issue
// a file makes readable, 50 a page.
import Foundation
import FaultlineProtocol

struct DebugFilesPage {
    let ctx: WebContext

    func render() throws -> HTTPResponse {
        let files = try ctx.stores.debugFiles.debugFiles().reversed()
        let uploaders = try ctx.queries.uploaders()
        var live = false
        var body =
            "<h1>Debug files</h1><table class=\"debug-files\"><thead><tr><th>Binary</th><th>Size</th><th>Contents</th><th>Uploaded</th><th>Backfill</th><th>Issues it makes readable</th></tr></thead><tbody>"
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
            let (issues, total) = try ctx.queries.issues(referencing: d.buildID.hex, limit: Self.issuesShown)
            var issueLinks = issues.map { "<div><a href=\"/ui/issues/\($0.id)\">\(HTML.esc(HTML.clip($0.title, 90)))</a></div>" }.joined()
            if total > Int64(issues.count) {
                issueLinks += "<div><a class=\"more\" href=\"/ui/debug-files/\(d.buildID.hex)\">\(total - Int64(issues.count)) more →</a></div>"
            }
            body += """
                <tr class="debug-file"><td class="binary">\(try nameCell(d))</td><td class="num">\(HTML.bytes(d.size))</td>
                <td>\(kinds.joined(separator: ", "))</td><td>\(HTML.time(d.uploaded))\(who)</td><td class="backfill">\(backfill)</td><td class="issues">\(issueLinks)</td></tr>
                """
        }
        if files.isEmpty { body += "<tr><td colspan=\"6\" class=\"muted\">No debug files yet: <code>faultline upload --wait PATH</code>.</td></tr>" }
        body += "</tbody></table>"
        var r = ctx.layout("Debug files", body)
        if live { r.headers.append(("Refresh", "2")) }
        return r
    }

    /// Issues listed per file on the list; the rest behind "more".
    static let issuesShown = 5

    /// The binary's name (bold), the uploaded file's name when it differs, and the build-id.
    func nameCell(_ d: DebugFileRecord) throws -> String {
        let binary = try ctx.queries.binaryName(buildID: d.buildID)
        var out = "<a class=\"name\" href=\"/ui/debug-files/\(d.buildID.hex)\">\(HTML.esc(binary ?? d.name))</a>"
        if let binary, binary != d.name { out += "<div class=\"muted\">uploaded as \(HTML.esc(d.name))</div>" }
        return out + "<div class=\"build-id\"><code>\(HTML.esc(d.buildID.hex))</code></div>"
    }

    /// /ui/debug-files/<build-id>: one file and every issue its stacks go through, 50 a page.
    func renderFile(_ idText: String) throws -> HTTPResponse {
        guard let id = BuildID(hex: idText), let d = try ctx.stores.debugFiles.debugFile(buildID: id) else { return WebUI.notFound("no such debug file") }
        let offset = max(0, min(Int(ctx.q("offset")) ?? 0, 1_000_000))
        let (issues, total) = try ctx.queries.issues(referencing: id.hex, limit: 50, offset: offset)
        let name = try ctx.queries.binaryName(buildID: id) ?? d.name
        var body = "<h1>\(HTML.esc(name))</h1><p class=\"muted file-head\">build-id <code>\(HTML.esc(id.hex))</code> · uploaded as \(HTML.esc(d.name)) · "
        body += "\(HTML.bytes(d.size)) · \(HTML.time(d.uploaded))</p><h2>Issues it makes readable (\(total))</h2>"
        body += "<table class=\"file-issues\"><thead><tr><th>Issue</th><th>State</th></tr></thead><tbody>"
        for i in issues {
            let state = i.symbolicated ? "<span class=\"tag sym\">symbolicated</span>" : "<span class=\"tag unsym\">not symbolicated</span>"
            body +=
                "<tr class=\"file-issue\"><td class=\"title\"><a href=\"/ui/issues/\(i.id)\">\(HTML.esc(HTML.clip(i.title, 200)))</a></td><td>\(state)</td></tr>"
        }
        if issues.isEmpty { body += "<tr><td colspan=\"2\" class=\"muted\">No stored stack goes through this file.</td></tr>" }
        body += "</tbody></table><div class=\"pager\"><a href=\"/ui/debug-files\">All debug files</a>"
        if Int64(offset + issues.count) < total {
            body += "<a rel=\"next\" href=\"/ui/debug-files/\(id.hex)?offset=\(offset + issues.count)\">Next page →</a>"
        }
        return ctx.layout(name, body + "</div>")
    }
}
