// The parts of one event shown on the issue page besides the stack: exception and signal,
// breadcrumbs, registers, modules, tags and contexts, request. All values are event text.
import Foundation
import FaultlineProtocol

enum EventSections {
    /// What the event's message said (`logentry` or `message`): a message event's whole text, or
    /// the log line an exception was reported with (`logger.exception("Failed to charge…")`).
    static func message(_ e: JSONValue) -> String {
        guard let text = StackExtractor.messageText(of: e), !text.isEmpty else { return "" }
        return "<h2>Message</h2><pre class=\"message\">\(HTML.esc(HTML.clip(text, 8192)))</pre>"
    }

    static func exception(_ e: JSONValue) -> String {
        guard let x = e["exception"]?["values"]?.arrayValue?.last else { return "" }
        var kv: [(String, String)] = []
        if let t = x["type"]?.stringValue { kv.append(("type", t)) }
        if let v = x["value"]?.stringValue { kv.append(("value", v)) }
        if let m = x["mechanism"] {
            if let t = m["type"]?.stringValue { kv.append(("mechanism", t)) }
            if let h = m["handled"]?.boolValue { kv.append(("handled", h ? "yes" : "no")) }
            if let sig = m["meta"]?["signal"] {
                let name = sig["name"]?.stringValue ?? ""
                let number = sig["number"]?.int64Value.map(String.init) ?? ""
                kv.append(("signal", [name, number.isEmpty ? "" : "(\(number))"].filter { !$0.isEmpty }.joined(separator: " ")))
                if let code = sig["code_name"]?.stringValue ?? sig["code"]?.int64Value.map({ String($0) }) { kv.append(("signal code", code)) }
            }
            if let addr = m["data"]?["fault_address"]?.stringValue ?? m["meta"]?["fault_address"]?.stringValue { kv.append(("fault address", addr)) }
        }
        return "<h2>Exception</h2>" + dl(kv)
    }

    static func breadcrumbs(_ e: JSONValue) -> String {
        let list = e["breadcrumbs"]?["values"]?.arrayValue ?? e["breadcrumbs"]?.arrayValue ?? []
        guard !list.isEmpty else { return "" }
        var out = "<h2>Breadcrumbs</h2><ol class=\"timeline\">"
        if list.count > 200 { out += "<li class=\"muted\">\(list.count - 200) earlier breadcrumbs not shown</li>" }
        for b in list.suffix(200) {
            let level = b["level"]?.stringValue ?? "info"
            let cls = ["fatal", "error", "warning", "warn", "info", "debug"].contains(level) ? "lvl-\(level)" : ""
            out += "<li><span class=\"muted\">\(HTML.esc(timestamp(b["timestamp"])))</span><span class=\"\(cls)\">\(HTML.esc(level))</span>"
            out += "<span>\(HTML.esc(b["category"]?.stringValue ?? ""))</span><span>\(HTML.esc(HTML.clip(b["message"]?.stringValue ?? "", 2000)))</span>"
            // An HTTP crumb's status code, a navigation's from and to: beside the message, not instead.
            if let data = b["data"], data != .null { out += "<span class=\"crumb-data\">\(HTML.esc(compact(data, 500)))</span>" }
            out += "</li>"
        }
        return out + "</ol>"
    }

    /// Who the event happened to (`user`): id, email, username and address first, then any other
    /// field the SDK sent.
    static func user(_ e: JSONValue) -> String {
        guard let user = e["user"]?.objectValue, !user.isEmpty else { return "" }
        let known = ["id", "email", "username", "ip_address"]
        var kv = known.compactMap { k in user[k].map { (k, compact($0, 2000)) } }
        kv += user.filter { !known.contains($0.key) }.sorted { $0.key < $1.key }.prefix(50).map { ($0.key, compact($0.value, 2000)) }
        return "<h2>User</h2>" + dl(kv)
    }

    /// The event's `extra`: what the app attached for this crash, key by key (the first 200).
    static func extra(_ e: JSONValue) -> String {
        guard let extra = e["extra"]?.objectValue, !extra.isEmpty else { return "" }
        let kv = extra.sorted { $0.key < $1.key }.prefix(200).map { ($0.key, compact($0.value, 2000)) }
        let more = extra.count > 200 ? "<p class=\"muted\">\(extra.count - 200) more keys are in the event JSON.</p>" : ""
        return "<h2>Extra</h2>" + dl(kv) + more
    }

    /// A value as text: a string as it is, anything else as compact JSON; at most `limit` characters.
    static func compact(_ v: JSONValue, _ limit: Int) -> String {
        HTML.clip(v.stringValue ?? v.jsonString, limit)
    }

    static func registers(_ e: JSONValue) -> String {
        var regs = e["exception"]?["values"]?.arrayValue?.last?["stacktrace"]?["registers"]?.objectValue
        if regs == nil, let threads = e["threads"]?["values"]?.arrayValue {
            regs = threads.first(where: { $0["crashed"]?.boolValue == true })?["stacktrace"]?["registers"]?.objectValue
        }
        guard let regs, !regs.isEmpty else { return "" }
        var out = "<h2>Registers</h2><div class=\"regs\">"
        for (k, v) in regs.sorted(by: { $0.key < $1.key }) { out += "<div>\(HTML.esc(k)) = \(HTML.esc(v.stringValue ?? v.jsonString))</div>" }
        return out + "</div>"
    }

    static func modules(_ e: JSONValue, files: DebugFileStore) -> String {
        let images = e["debug_meta"]?["images"]?.arrayValue ?? []
        guard !images.isEmpty else { return "" }
        var out = "<h2>Modules</h2><table><thead><tr><th>Module</th><th>Build-id</th><th>Load address</th><th>Debug file</th></tr></thead><tbody>"
        for img in images.prefix(500) {
            let codeID = img["code_id"]?.stringValue ?? img["debug_id"]?.stringValue ?? ""
            let present = BuildID(hex: codeID).map { files.hasSymbols(for: $0) } ?? false
            out += "<tr><td>\(HTML.esc(img["code_file"]?.stringValue ?? "?"))</td><td><code>\(HTML.esc(codeID))</code></td>"
            out += "<td><code>\(HTML.esc(img["image_addr"]?.stringValue ?? ""))</code></td>"
            out += present ? "<td><span class=\"tag sym\">present</span></td></tr>" : "<td><span class=\"tag unsym\">missing</span></td></tr>"
        }
        return out + "</tbody></table>"
    }

    /// `projectSlug` makes the trace id a link to the trace page.
    static func tagsAndContexts(_ e: JSONValue, projectSlug: String? = nil) -> String {
        var tags: [(String, String)] = []
        if let o = e["tags"]?.objectValue {
            tags = o.sorted { $0.key < $1.key }.map { ($0.key, $0.value.stringValue ?? $0.value.jsonString) }
        } else if let a = e["tags"]?.arrayValue {
            tags = a.compactMap { p in p[0]?.stringValue.map { ($0, p[1]?.stringValue ?? "") } }
        }
        for k in ["environment", "release", "dist", "server_name", "platform", "level"] {
            if let v = e[k]?.stringValue { tags.append((k, v)) }
        }
        var out = tags.isEmpty ? "" : "<h2>Tags</h2>" + dl(tags)
        out += request(e)
        if let contexts = e["contexts"]?.objectValue, !contexts.isEmpty {
            out += "<h2>Contexts</h2>"
            var kv: [(String, String)] = []
            for (name, ctx) in contexts.sorted(by: { $0.key < $1.key }) {
                if let o = ctx.objectValue {
                    for (k, v) in o.sorted(by: { $0.key < $1.key }) { kv.append(("\(name).\(k)", v.stringValue ?? v.jsonString)) }
                } else {
                    kv.append((name, ctx.stringValue ?? ctx.jsonString))
                }
            }
            let traceID = projectSlug.flatMap { _ in TransactionIngest.traceContext(of: e)?.traceID }
            out += "<dl class=\"kv\">"
            for (k, v) in kv.prefix(300) {
                if k == "trace.trace_id", let slug = projectSlug, let id = traceID, v.lowercased() == id {
                    out += "<dt>\(HTML.esc(k))</dt><dd><a href=\"/ui/projects/\(HTML.q(slug))/traces/\(HTML.q(id))\">\(HTML.esc(v))</a></dd>"
                } else {
                    out += "<dt>\(HTML.esc(k))</dt><dd>\(HTML.esc(HTML.clip(v, 2000)))</dd>"
                }
            }
            out += "</dl>"
        }
        return out
    }

    /// Sentry's request interface as a web backend's SDK sends it: method and URL, the query, the
    /// headers, cookies and environment (each an object, a list of pairs or a string), and the body
    /// (`data`: text, or JSON shown as the SDK sent it). What the SDK scrubbed stays scrubbed: only
    /// what arrived is shown.
    static func request(_ e: JSONValue) -> String {
        guard let r = e["request"], r.objectValue != nil else { return "" }
        var kv: [(String, String)] = []
        var line = ""
        if let method = r["method"]?.stringValue { line = HTML.esc(HTML.clip(method, 32)) + " " }
        if let u = r["url"]?.stringValue {
            line += HTML.safeExternalURL(u).map { "<a href=\"\($0)\" rel=\"noopener noreferrer nofollow\">\($0)</a>" } ?? HTML.esc(HTML.clip(u, 2000))
        }
        if let query = r["query_string"], let text = queryText(query) { kv.append(("query", text)) }
        if let fragment = r["fragment"]?.stringValue, !fragment.isEmpty { kv.append(("fragment", fragment)) }
        var out = "<h2>Request</h2>"
        if !line.isEmpty { out += "<p class=\"request-line\"><code>\(line)</code></p>" }
        if !kv.isEmpty { out += dl(kv) }
        for (name, key) in [("Headers", "headers"), ("Cookies", "cookies"), ("Environment", "env")] {
            guard let value = r[key] else { continue }
            let rows = pairs(value)
            if rows.isEmpty, let text = value.stringValue, !text.isEmpty {
                out += "<h3>\(name)</h3><pre class=\"request-data\">\(HTML.esc(HTML.clip(text, 8192)))</pre>"
            } else if !rows.isEmpty {
                out += "<h3>\(name)</h3>" + dl(Array(rows.prefix(200)))
            }
        }
        if let data = r["data"], data != .null {
            let text = data.stringValue ?? String(decoding: data.serialized(pretty: true), as: UTF8.self)
            if !text.isEmpty { out += "<h3>Body</h3><pre class=\"request-data\">\(HTML.esc(HTML.clip(text, 8192)))</pre>" }
        }
        return out == "<h2>Request</h2>" ? "" : out
    }

    /// An object's members or a list of [name, value] pairs, in the order sent (a string: none).
    static func pairs(_ v: JSONValue) -> [(String, String)] {
        if let o = v.objectValue { return o.members.map { ($0.key, $0.value.stringValue ?? $0.value.jsonString) } }
        return (v.arrayValue ?? []).compactMap { p in
            guard let name = p[0]?.stringValue else { return nil }
            return (name, p[1].map { $0.stringValue ?? $0.jsonString } ?? "")
        }
    }

    /// A query as one line: a string as sent, pairs joined (`a=1&b=2`).
    static func queryText(_ v: JSONValue) -> String? {
        if let s = v.stringValue { return s.isEmpty ? nil : s }
        let rows = pairs(v)
        return rows.isEmpty ? nil : rows.map { $0.0 + "=" + $0.1 }.joined(separator: "&")
    }

    static func dl(_ kv: [(String, String)]) -> String {
        "<dl class=\"kv\">" + kv.map { "<dt>\(HTML.esc($0.0))</dt><dd>\(HTML.esc(HTML.clip($0.1, 2000)))</dd>" }.joined() + "</dl>"
    }

    /// A breadcrumb's time as every other time on the pages (UTC), whatever form the SDK sent:
    /// seconds, seconds as text, RFC 3339 with any offset; text that is no time, as sent.
    static func timestamp(_ v: JSONValue?) -> String {
        if let t = EventFields.timestamp(v) { return HTML.time(t) }
        if let text = v?.stringValue, let d = Double(text), let t = EventFields.timestamp(.double(d)) { return HTML.time(t) }
        return v?.stringValue ?? ""
    }
}
