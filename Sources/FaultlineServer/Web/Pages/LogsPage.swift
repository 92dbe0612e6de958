// /ui/projects/<slug>/logs: the `log` items SDKs send, newest first, with their attributes and a
// link to their trace, filtered by level, release, text and `key:value` attribute terms, and (from
// an occurrence or a trace page) by trace id, around a time. One view reads a bounded number of
// items and bytes, keeps only the lines it shows, and cuts each shown body: what clients stored
// cannot make a view cost more than that (docs/SERVER.md "Limits"). Pages backwards by item id.
import Foundation
import FaultlineProtocol

struct LogsPage {
    let ctx: WebContext
    let project: ProjectRecord
    /// 150 lines a page keep a page of lines with attributes under 100 KB (tools/bench-web).
    static let itemsPerPage = 150
    static let bytesPerPage = 8 * 1024 * 1024
    static let linesPerPage = 150
    /// A longer body is shown cut, with its full size.
    static let shownBodyBytes = 4096
    /// "Around this time" from an occurrence: five minutes either side.
    static let window: Double = 300

    /// Attributes shown per line (each value cut at `shownAttributeChars`); the rest are counted.
    static let shownAttributes = 30
    static let shownAttributeChars = 200

    struct Line {
        var timestamp: Double
        var level: String
        var body: String
        var release: String
        var trace: String
        /// `attributes` as sent (`{key: {value, type}}`), values as text, in key order.
        var attributes: [(key: String, value: String)]
    }

    /// The text box split: `key:value` terms match an attribute exactly, the rest of the words
    /// (in order) match the body.
    struct Search {
        var text = ""
        var attributes: [(key: String, value: String)] = []

        init(_ q: String) {
            var words: [Substring] = []
            for w in q.split(whereSeparator: \.isWhitespace) {
                if let colon = w.firstIndex(of: ":"), colon != w.startIndex, w.index(after: colon) != w.endIndex {
                    attributes.append((String(w[..<colon]), String(w[w.index(after: colon)...])))
                } else {
                    words.append(w)
                }
            }
            text = words.joined(separator: " ")
        }

        func matches(_ l: Line) -> Bool {
            if !text.isEmpty && !l.body.localizedCaseInsensitiveContains(text) { return false }
            return attributes.allSatisfy { term in l.attributes.contains { $0.key == term.key && $0.value == term.value } }
        }
    }

    /// An attribute's value as text: Sentry sends `{value, type}`; a bare value is read as it is.
    static func attributeText(_ v: JSONValue) -> String {
        let value = v["value"] ?? v
        if let s = value.stringValue { return s }
        if let b = value.boolValue { return b ? "true" : "false" }
        if case .int(let i) = value { return String(i) }
        if let d = value.doubleValue { return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }
        return value.jsonString
    }

    /// A line's level as sent against the filter's: `warn` and `warning` are one level (the SDK
    /// sends `warning`, other Sentry clients `warn`).
    static func sameLevel(_ sent: String, _ filter: String) -> Bool {
        sent == filter || LogLevel.sentryName(of: sent).map { $0 == LogLevel.sentryName(of: filter) } ?? false
    }

    /// The lines of one stored `log` item (a line without a timestamp takes the time received).
    static func lines(_ payload: Data, received: Double) -> [Line] {
        guard let v = try? JSONParser.parse(payload) else { return [] }
        // As every event read here: credentials filtered (SensitiveData), in the body and in the
        // attributes, by key and by value; card numbers, IBANs, SSNs and email addresses named in
        // the body, as in an event's message, and the numbers filtered in the attributes.
        return (v["items"]?.arrayValue ?? []).map { l in
            let body = l["body"]?.stringValue ?? ""
            return Line(
                timestamp: l["timestamp"]?.doubleValue ?? received, level: l["level"]?.stringValue ?? "info",
                body: SensitiveData.scrubbedMessage(body), release: l["attributes"]?["sentry.release"]?["value"]?.stringValue ?? "",
                trace: l["trace_id"]?.stringValue ?? "",
                attributes: (l["attributes"]?.objectValue ?? [:]).map { key, value -> (key: String, value: String) in
                    if SensitiveData.isSensitive(key: key) { return (key, "[Filtered]") }
                    let text = Self.attributeText(value)
                    return (key, SensitiveData.scrubbedValue(text))
                }.sorted { $0.key < $1.key })
        }
    }

    /// The filters the page and the logs API share; an empty one matches every line.
    struct Filter {
        var level = "", release = "", trace = ""
        var search = Search("")

        func matches(_ line: Line) -> Bool {
            if !level.isEmpty && !LogsPage.sameLevel(line.level, level) { return false }
            if !release.isEmpty && line.release != release { return false }
            if !trace.isEmpty && line.trace != trace { return false }
            return search.matches(line)
        }
    }

    func render() throws -> HTTPResponse {
        let level = ctx.q("level"), release = ctx.q("release"), text = String(ctx.q("q").prefix(500)), trace = ctx.q("trace")
        let filter = Filter(level: level, release: release, trace: trace, search: Search(text))
        // A query string number: only a finite time within the timestamps ingest keeps.
        let around = Double(ctx.q("around")).flatMap { $0.isFinite && $0 >= 0 && $0 <= EventFields.latestTimestamp ? $0 : nil }
        // Pages follow the items in the order they arrived, newest first, each item's matching
        // lines newest first; a page that ends inside an item says where (`before` = that item,
        // `skip` = its lines already shown), so every matching line is on some page (trimming a
        // page to its newest lines lost the rest of the items it had read).
        let resumeItem = Int64(ctx.q("before")), resumeSkip = max(0, Int(ctx.q("skip")) ?? 0)
        var lines: [Line] = []
        var next: (item: Int64, skip: Int)?
        let scannedTo = try ctx.queries.scanItems(
            projectID: project.id, type: "log", before: resumeSkip > 0 ? resumeItem.map { $0 &+ 1 } : resumeItem,
            maxItems: Self.itemsPerPage, maxBytes: Self.bytesPerPage, stop: { next != nil }
        ) { id, received, payload in
            var matching = Self.lines(payload, received: received).enumerated().filter { _, line in
                if let around, abs(line.timestamp - around) > Self.window { return false }
                return filter.matches(line)
            }
            matching.sort { ($0.element.timestamp, $0.offset) > ($1.element.timestamp, $1.offset) }
            let skip = id == resumeItem ? min(resumeSkip, matching.count) : 0
            let room = Self.linesPerPage - lines.count
            let shown = matching.dropFirst(skip).prefix(room)
            lines.append(contentsOf: shown.map(\.element))
            if skip + shown.count < matching.count {
                next = (id, skip + shown.count)
            } else if lines.count >= Self.linesPerPage {
                next = (id, 0)
            }
        }
        lines.sort { $0.timestamp > $1.timestamp }
        let older: (item: Int64, skip: Int)? = next ?? scannedTo.map { ($0, 0) }
        let slug = HTML.q(project.slug)
        func option(_ value: String, _ current: String) -> String {
            "<option value=\"\(HTML.esc(value))\"\(value == current ? " selected" : "")>\(HTML.esc(value.isEmpty ? "any level" : value))</option>"
        }
        var body = "<h1>Logs · \(HTML.esc(project.name))</h1>"
        body += "<form class=\"filters\" method=\"get\" action=\"/ui/projects/\(slug)/logs\"><select name=\"level\">"
        for l in [""] + LogLevel.sentryNames { body += option(l, level) }
        body +=
            "</select><input name=\"release\" placeholder=\"release\" value=\"\(HTML.esc(release))\"><input type=\"search\" name=\"q\" placeholder=\"text or key:value\" value=\"\(HTML.esc(text))\">"
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
            body += "<span>\(HTML.esc(l.release))</span><span>\(HTML.esc(Self.shown(l.body)))</span>"
            if let id = TransactionDecoder.hexID(l.trace, 32) {
                body += "<a class=\"trace\" href=\"/ui/projects/\(slug)/traces/\(HTML.q(id))\" title=\"trace \(HTML.esc(id))\">"
                body += "trace \(HTML.esc(String(id.prefix(8))))</a>"
            } else {
                body += "<span class=\"muted\">—</span>"
            }
            body += attributes(l)
            body += "</li>"
        }
        if lines.isEmpty { body += "<li class=\"muted\">No log lines match.</li>" }
        body += "</ol>"
        if let older {
            var link = "/ui/projects/\(slug)/logs?before=\(older.item)"
            link += "&level=\(HTML.q(level))&release=\(HTML.q(release))&q=\(HTML.q(text))&trace=\(HTML.q(trace))"
            if older.skip > 0 { link += "&skip=\(older.skip)" }
            if let around { link += "&around=\(Int64(around))" }
            body += "<div class=\"pager\"><a href=\"\(HTML.esc(link))\">Older →</a></div>"
        }
        return ctx.layout("Logs", body, project: project)
    }

    /// A line's own attributes as tags, each a link that filters by it; `sentry.*` ones (what the
    /// SDK adds to every line) folded away.
    func attributes(_ l: Line) -> String {
        guard !l.attributes.isEmpty else { return "" }
        let slug = HTML.q(project.slug)
        func tag(_ a: (key: String, value: String)) -> String {
            let shown = HTML.esc(a.key) + "=" + HTML.esc(HTML.clip(a.value, Self.shownAttributeChars))
            // A value with spaces cannot be one `key:value` term: shown, not linked.
            guard !a.key.contains(where: \.isWhitespace), !a.value.contains(where: \.isWhitespace), a.value.count <= Self.shownAttributeChars else {
                return "<span class=\"tag\">\(shown)</span>"
            }
            return "<a class=\"tag\" href=\"/ui/projects/\(slug)/logs?q=\(HTML.q(a.key + ":" + a.value))\">\(shown)</a>"
        }
        let own = l.attributes.filter { !$0.key.hasPrefix("sentry.") }, sdk = l.attributes.filter { $0.key.hasPrefix("sentry.") }
        var out = "<div class=\"attrs\">" + own.prefix(Self.shownAttributes).map(tag).joined()
        if own.count > Self.shownAttributes { out += "<span class=\"muted\"> +\(own.count - Self.shownAttributes) more</span>" }
        if !sdk.isEmpty {
            out += "<details><summary>SDK attributes (\(sdk.count))</summary>" + sdk.prefix(Self.shownAttributes).map(tag).joined() + "</details>"
        }
        return out + "</div>"
    }

    /// A body as shown: whole up to `shownBodyBytes`, else cut at a character boundary with its size.
    static func shown(_ body: String) -> String {
        guard body.utf8.count > shownBodyBytes else { return body }
        var cut = body.utf8.prefix(shownBodyBytes)
        while !cut.isEmpty, String(cut) == nil { cut = cut.dropLast() }
        return (String(cut) ?? "") + " … (\(body.utf8.count) bytes)"
    }
}
