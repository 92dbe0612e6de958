// The crashing stack as HTML: innermost frame first (caller last, as Sentry and Bugsink show
// it), in-app frames emphasised, each physical frame with the frames inlined into it grouped
// beneath, file:line when known, module and address behind <details> (no script needed).
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

enum StackView {
    /// Frames in `pending` are still being looked up (ReadSymbolication): shown by address, with a
    /// note that a reload shows them symbolicated.
    static func render(event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup> = []) -> String {
        render(StackExtractor.framesWithJSON(of: event), symbolicator: symbolicator, pending: pending)
    }

    /// Every other thread the event carries (`threads.values` with a stacktrace, the crashed one
    /// left out: it is the stack above), each under its id, name and state, folded.
    static func threads(event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup>) -> String {
        let threads = (event["threads"]?["values"]?.arrayValue ?? []).filter { $0["crashed"]?.boolValue != true }
        guard !threads.isEmpty else { return "" }
        let images = DebugImageMap(event: event)
        var out = "<h2>Threads (\(threads.count) more)</h2>"
        for t in threads.prefix(200) {
            let id = t["id"]?.int64Value.map(String.init) ?? t["id"]?.stringValue ?? "?"
            let name = t["name"]?.stringValue ?? ""
            var label = "thread \(HTML.esc(id))" + (name.isEmpty ? "" : " · \(HTML.esc(HTML.clip(name, 60)))")
            if let state = t["state"]?.stringValue ?? t["data"]?["state"]?.stringValue { label += " <span class=\"muted\">(\(HTML.esc(state)))</span>" }
            out += "<details class=\"thread\"><summary>\(label)</summary>"
            if let st = t["stacktrace"], st["frames"]?.arrayValue?.isEmpty == false {
                out += render(StackExtractor.framesWithJSON(of: st, images: images), symbolicator: symbolicator, pending: pending, crashed: false)
            } else {
                let why = t["faultline_error"]?.stringValue ?? "no stack"
                out += "<p class=\"muted\">\(HTML.esc(why))</p>"
            }
            out += "</details>"
        }
        if threads.count > 200 { out += "<p class=\"muted\">\(threads.count - 200) more threads are in the event JSON.</p>" }
        return out
    }

    static func render(
        _ withJSON: [(frame: StackFrame, json: JSONValue)], symbolicator: FrameSymbolicating, pending: Set<FrameLookup>,
        crashed: Bool = true
    ) -> String {
        let frames = withJSON.map(\.frame)
        guard !frames.isEmpty else { return "<p class=\"muted\">This event has no stack.</p>" }
        var out = pending.isEmpty ? "" : "<p class=\"muted symbolicating\">Symbolicating… some frames are still being looked up; reload in a moment.</p>"
        out += "<div class=\"stack\">"
        for (n, f) in frames.enumerated() {
            let isPending = f.buildID.map { pending.contains(FrameLookup(buildID: $0, offset: f.offset, isReturnAddress: f.isReturnAddress)) } ?? false
            let resolved =
                isPending
                ? []
                : f.buildID.flatMap { symbolicator.resolve(buildID: $0, modulePath: f.module, offset: f.offset, isReturnAddress: f.isReturnAddress).frames }
                    ?? []
            let moduleName = f.module.map { ($0 as NSString).lastPathComponent } ?? f.buildID.map { String($0.hex.prefix(12)) } ?? "?"
            // Faultline's own frames (FaultlineOwnFrames) stay visible, dimmed: they explain the
            // stack's shape (the terminate handler between a throw and abort) but are never the app's.
            let own =
                f.isFaultline || (!resolved.isEmpty && resolved.allSatisfy { FaultlineOwnFrames.isOwn(function: $0.function, rawFunction: $0.mangledFunction) })
            let classes = "frame " + (f.inApp && !own ? "inapp" : "system") + (own ? " own" : "") + (n == 0 && crashed ? " crashed" : "")
            out += "<div class=\"\(classes)\"" + (own ? " title=\"Faultline's own code\">" : ">")
            // The symbolicator lists inlined frames innermost first and the physical function last.
            if let physical = resolved.last {
                out += "<span class=\"fn\">\(HTML.esc(physical.function ?? "?"))</span>" + location(physical)
                for inl in resolved.dropLast() {
                    out +=
                        "<div class=\"inl\"><span class=\"badge\">inlined</span><span class=\"fn\">\(HTML.esc(inl.function ?? "?"))</span>\(location(inl))</div>"
                }
            } else if isPending {
                out +=
                    "<span class=\"fn\">\(HTML.esc(f.clientFunction ?? moduleName + "+0x" + String(f.offset, radix: 16)))</span><span class=\"loc\">(symbolicating…)</span>"
            } else if f.buildID == nil, let fn = f.clientFunction, let source = SourceFrame(withJSON[n].json) {
                // A non-native frame (Python, JavaScript, …): the client resolved it already.
                out += "<span class=\"fn\">\(HTML.esc(fn))</span><span class=\"loc\">\(HTML.esc(source.location))</span>"
                out += source.contextHTML
            } else if let fn = f.clientFunction {
                out += "<span class=\"fn\">\(HTML.esc(fn))</span><span class=\"loc\">(client symbol)</span>"
            } else {
                out += "<span class=\"fn\">\(HTML.esc(moduleName))+0x\(String(f.offset, radix: 16))</span><span class=\"loc\">(no debug file)</span>"
            }
            out += "<details><summary>module and address</summary>\(HTML.esc(f.module ?? "?")) + 0x\(String(f.offset, radix: 16))"
            out += f.buildID.map { " · build-id \(HTML.esc($0.hex))" } ?? ""
            out += f.isReturnAddress ? " · return address" : " · faulting address"
            out += "</details></div>"
        }
        return out + "</div>"
    }

    static func location(_ r: SymbolicatedFrame) -> String {
        guard let file = r.file else { return "" }
        var s = HTML.esc(file)
        if let l = r.line { s += ":\(l)" }
        if let c = r.column, c > 0 { s += ":\(c)" }
        return "<span class=\"loc\">\(s)</span>"
    }
}

/// What a client-resolved (non-native) frame carries: file, line, column and source context.
/// `vars` are not shown: they can hold secrets.
struct SourceFrame {
    var file: String
    var line: Int64?
    var column: Int64?
    var pre: [String]
    var context: String?
    var post: [String]

    init?(_ json: JSONValue) {
        guard let file = json["filename"]?.stringValue ?? json["abs_path"]?.stringValue ?? json["module"]?.stringValue, !file.isEmpty else { return nil }
        self.file = file
        line = json["lineno"]?.int64Value
        column = json["colno"]?.int64Value
        pre = (json["pre_context"]?.arrayValue ?? []).suffix(5).compactMap(\.stringValue)
        context = json["context_line"]?.stringValue
        post = (json["post_context"]?.arrayValue ?? []).prefix(5).compactMap(\.stringValue)
    }

    var location: String { file + (line.map { ":\($0)" } ?? "") + (column.map { ":\($0)" } ?? "") }

    /// The lines around the frame's, numbered, the frame's own emphasised (nothing when the client sent none).
    var contextHTML: String {
        guard let context else { return "" }
        let first = (line ?? 1) - Int64(pre.count)
        var rows = ""
        for (i, text) in (pre + [context] + post).enumerated() {
            let number = first + Int64(i)
            let current = i == pre.count
            rows +=
                "<span class=\"\(current ? "cur" : "ctx")\">\(line == nil ? "" : String(number).padding(toLength: 6, withPad: " ", startingAt: 0))\(HTML.esc(HTML.clip(text, 300)))</span>\n"
        }
        return "<pre class=\"source\">\(rows)</pre>"
    }
}
