// /ui/projects/<slug>/logs: the `log` items SDKs send, newest first, filtered by level, release,
// text, and (from an occurrence) by trace id around a time. One view reads a bounded number of
// items and bytes, keeps only the lines it shows, and cuts each shown body: what clients stored
// cannot make a view cost more than that (docs/SERVER.md "Limits"). Pages backwards by item id.
import Foundation
import FaultlineProtocol

struct LogsPage {
    let ctx: WebContext
    let project: ProjectRecord
    static let itemsPerPage = 300
    static let bytesPerPage = 8 * 1024 * 1024
    static let linesPerPage = 300
    /// A longer body is shown cut, with its full size.
    static let shownBodyBytes = 4096
    /// "Around this time" from an occurrence: five minutes either side.
    static let window: Double = 300

    struct Line { var timestamp: Double; var level: String; var body: String; var release: String; var trace: String }

    /// A line's level as sent against the filter's: `warn` and `warning` are one level (the SDK
    /// sends `warning`, other Sentry clients `warn`).
    static func sameLevel(_ sent: String, _ filter: String) -> Bool {
        sent == filter || LogLevel.sentryName(of: sent).map { $0 == LogLevel.sentryName(of: filter) } ?? false
    }

    func render() throws -> HTTPResponse {
        let level = ctx.q("level"), release = ctx.q("release"), text = ctx.q("q"), trace = ctx.q("trace")
        // A query string number: only a finite time within the timestamps ingest keeps.
        let around = Double(ctx.q("around")).flatMap { $0.isFinite && $0 >= 0 && $0 <= EventFields.latestTimestamp ? $0 : nil }
        var lines: [Line] = []
        // Only the newest `linesPerPage` matches are shown: trimmed whenever twice that many are held.
        func keepNewest() {
            lines.sort { $0.timestamp > $1.timestamp }
            lines.removeLast(max(0, lines.count - Self.linesPerPage))
        }
        let older = try ctx.queries.scanItems(
            projectID: project.id, type: "log", before: Int64(ctx.q("before")), maxItems: Self.itemsPerPage, maxBytes: Self.bytesPerPage
        ) { _, received, payload in
            guard let v = try? JSONParser.parse(payload) else { return }
            for l in v["items"]?.arrayValue ?? [] {
                let line = Line(
                    timestamp: l["timestamp"]?.doubleValue ?? received, level: l["level"]?.stringValue ?? "info",
                    body: l["body"]?.stringValue ?? "", release: l["attributes"]?["sentry.release"]?["value"]?.stringValue ?? "",
                    trace: l["trace_id"]?.stringValue ?? "")
                if !level.isEmpty && !Self.sameLevel(line.level, level) { continue }
                if !release.isEmpty && line.release != release { continue }
                if !trace.isEmpty && line.trace != trace { continue }
                if let around, abs(line.timestamp - around) > Self.window { continue }
                if !text.isEmpty && !line.body.localizedCaseInsensitiveContains(text) { continue }
                lines.append(line)
                if lines.count >= 2 * Self.linesPerPage { keepNewest() }
            }
        }
        keepNewest()
        let slug = HTML.q(project.slug)
        func option(_ value: String, _ current: String) -> String {
            "<option value=\"\(HTML.esc(value))\"\(value == current ? " selected" : "")>\(HTML.esc(value.isEmpty ? "any level" : value))</option>"
        }
        var body = "<h1>Logs · \(HTML.esc(project.name))</h1>"
        body += "<form class=\"filters\" method=\"get\" action=\"/ui/projects/\(slug)/logs\"><select name=\"level\">"
        for l in [""] + LogLevel.sentryNames { body += option(l, level) }
        body +=
            "</select><input name=\"release\" placeholder=\"release\" value=\"\(HTML.esc(release))\"><input type=\"search\" name=\"q\" placeholder=\"text\" value=\"\(HTML.esc(text))\">"
        if !trace.isEmpty { body += "<input type=\"hidden\" name=\"trace\" value=\"\(HTML.esc(trace))\">" }
        if let around { body += "<input type=\"hidden\" name=\"around\" value=\"\(Int64(around))\">" }
        body += "<button type=\"submit\">Filter</button></form>"
        if !trace.isEmpty {
            body +=
                "<p class=\"muted\">Session \(HTML.esc(trace))\(around.map { " within 5 min of \(HTML.time($0))" } ?? "") · <a href=\"/ui/projects/\(slug)/logs\">all logs</a></p>"
        }
        body += "<ol class=\"timeline logs\">"
        for l in lines {
            body += "<li><span class=\"muted\">\(HTML.time(l.timestamp))</span><span class=\"lvl-\(HTML.esc(l.level))\">\(HTML.esc(l.level))</span>"
            body += "<span>\(HTML.esc(l.release))</span><span>\(HTML.esc(Self.shown(l.body)))</span></li>"
        }
        if lines.isEmpty { body += "<li class=\"muted\">No log lines match.</li>" }
        body += "</ol>"
        if let older {
            var link = "/ui/projects/\(slug)/logs?before=\(older)&level=\(HTML.q(level))&release=\(HTML.q(release))&q=\(HTML.q(text))&trace=\(HTML.q(trace))"
            if let around { link += "&around=\(Int64(around))" }
            body += "<div class=\"pager\"><a href=\"\(HTML.esc(link))\">Older →</a></div>"
        }
        return ctx.layout("Logs", body, project: project)
    }

    /// A body as shown: whole up to `shownBodyBytes`, else cut at a character boundary with its size.
    static func shown(_ body: String) -> String {
        guard body.utf8.count > shownBodyBytes else { return body }
        var cut = body.utf8.prefix(shownBodyBytes)
        while !cut.isEmpty, String(cut) == nil { cut = cut.dropLast() }
        return (String(cut) ?? "") + " … (\(body.utf8.count) bytes)"
    }
}
