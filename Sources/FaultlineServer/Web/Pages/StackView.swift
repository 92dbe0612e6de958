// The crashing stack as HTML: innermost frame first (caller last, as Sentry and Bugsink show
// it), in-app frames emphasised, each physical frame with the frames inlined into it grouped
// beneath, file:line when known, the lines around it (uploaded sources, or the event's own
// context lines), the short name with the full one behind <details>, module and address behind
// another <details> (no script needed).
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

enum StackView {
    /// Frames in `pending` are still being looked up (ReadSymbolication): shown by address, with a
    /// note that a reload shows them symbolicated.
    static func render(event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup> = [], sources: SourceLines? = nil) -> String {
        render(ReadTimeStack.crashing(in: event, symbolicator: symbolicator, pending: pending), sources: sources)
    }

    /// The exceptions chained before the one raised last (its causes: Python's `__context__`,
    /// Java's `cause`, .NET's inner exceptions; `exception.values` lists them oldest first), each
    /// with its type, value and stack, the most recent first, as Sentry shows them.
    static func chainedExceptions(event: JSONValue, symbolicator: FrameSymbolicating, sources: SourceLines? = nil) -> String {
        let values = event["exception"]?["values"]?.arrayValue ?? []
        guard values.count > 1 else { return "" }
        let images = DebugImageMap(event: event)
        let earlier = values.dropLast().reversed()
        var out = "<h2>Chained exceptions (\(earlier.count) more)</h2>"
        for x in earlier.prefix(50) {
            let type = x["type"]?.stringValue ?? "", value = x["value"]?.stringValue ?? ""
            let label = [type, value].filter { !$0.isEmpty }.joined(separator: ": ")
            out += "<details class=\"chained\" open><summary>\(HTML.esc(HTML.clip(label.isEmpty ? "exception" : label, 300)))</summary>"
            if let st = x["stacktrace"], st["frames"]?.arrayValue?.isEmpty == false {
                let stack = ReadTimeStack.build(StackExtractor.framesWithJSON(of: st, images: images), symbolicator: symbolicator, pending: [])
                out += render(stack, crashed: false, sources: sources)
            } else {
                out += "<p class=\"muted\">no stack</p>"
            }
            out += "</details>"
        }
        if earlier.count > 50 { out += "<p class=\"muted\">\(earlier.count - 50) more exceptions are in the event JSON.</p>" }
        return out
    }

    /// Every other thread the event carries (`threads.values` with a stacktrace, the crashed one
    /// left out: it is the stack above), each under its id, name and state, folded.
    static func threads(event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup>, sources: SourceLines? = nil) -> String {
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
                let stack = ReadTimeStack.build(StackExtractor.framesWithJSON(of: st, images: images), symbolicator: symbolicator, pending: pending)
                out += render(stack, crashed: false, sources: sources)
            } else {
                let why = t["faultline_error"]?.stringValue ?? "no stack"
                out += "<p class=\"muted\">\(HTML.esc(why))</p>"
            }
            out += "</details>"
        }
        if threads.count > 200 { out += "<p class=\"muted\">\(threads.count - 200) more threads are in the event JSON.</p>" }
        return out
    }

    /// The frames shown of one stack: the innermost (where it failed) and the outermost (how the
    /// thread began). A deeper stack is nearly always a runaway recursion whose middle repeats
    /// the same frames; 10,000 of them made a page of megabytes.
    static let innermostShown = 200
    static let outermostShown = 50

    /// One entry per address, innermost first: the function, the calls inlined into it beneath,
    /// or why it has no name; Faultline's own addresses stay visible, dimmed (they explain the
    /// stack's shape, the terminate handler between a throw and abort, but are never the app's).
    static func render(_ stack: SymbolicatedStack, crashed: Bool = true, sources: SourceLines? = nil) -> String {
        let addresses = stack.physicalFrames
        guard !addresses.isEmpty else { return "<p class=\"muted\">This event has no stack.</p>" }
        let isPending = stack.frames.contains { $0.outcome == .pending }
        var out = isPending ? "<p class=\"muted symbolicating\">Symbolicating… some frames are still being looked up; reload in a moment.</p>" : ""
        out += "<div class=\"stack\">"
        let hidden = addresses.count > innermostShown + outermostShown ? innermostShown..<(addresses.count - outermostShown) : 0..<0
        for (n, calls) in addresses.enumerated() {
            if n == hidden.lowerBound, !hidden.isEmpty {
                out += "<p class=\"muted frames-hidden\">\(hidden.count) frames not shown (the event JSON has them all)</p>"
            }
            if hidden.contains(n) { continue }
            // The model lists inlined calls innermost first and the physical function last.
            guard let f = calls.last else { continue }
            let own = calls.allSatisfy { $0.role == .faultline }
            let inApp = calls.contains { $0.role == .inApp }
            let classes = "frame " + (inApp ? "inapp" : "system") + (own ? " own" : "") + (n == 0 && crashed ? " crashed" : "")
            out += "<div class=\"\(classes)\"" + (own ? " title=\"Faultline's own code\">" : ">")
            // A Swift async caller (the task's logical caller, not a return address on the stack).
            if f.isAsync { out += "<span class=\"badge\" title=\"a Swift async caller\">async</span>" }
            let offset = "0x" + String(f.moduleOffset ?? 0, radix: 16)
            let moduleName = f.module.map { ($0 as NSString).lastPathComponent } ?? f.buildID.map { String($0.hex.prefix(12)) } ?? "?"
            switch f.outcome {
            case .symbolicated:
                out += name(f, location(f))
                for inl in calls.dropLast() {
                    out += "<div class=\"inl\"><span class=\"badge\">inlined</span>\(name(inl, location(inl)))</div>"
                }
                // The innermost call's lines: where this address is.
                if let innermost = calls.first { out += sourceHTML(innermost, sources) }
            case .pending:
                out += "<span class=\"fn\">\(HTML.esc(f.function ?? moduleName + "+" + offset))</span><span class=\"loc\">(symbolicating…)</span>"
            case .unresolved, .notLookedUp:
                // Why there is no name says what to upload (a debug file, the right build of it).
                let why = f.outcome.unresolvedReason.map { $0.message } ?? "not symbolicated"
                if let source = f.clientSource, f.function != nil || !source.location.isEmpty {
                    // The client resolved the frame itself: a non-native one (Python, JavaScript, …),
                    // or a native one the server has no debug file for (said so beside it). One
                    // without a function (a PHP script's top level, an anonymous JS function) is
                    // its file and line.
                    out += f.function.map { "<span class=\"fn\">\(HTML.esc($0))</span>" } ?? ""
                    out += "<span class=\"loc\">\(HTML.esc(source.location))</span>"
                    if f.buildID != nil { out += "<span class=\"loc\">(client symbol; \(HTML.esc(why)))</span>" }
                    out += sourceHTML(source) + variablesHTML(source)
                } else if let fn = f.function {
                    out += "<span class=\"fn\">\(HTML.esc(fn))</span><span class=\"loc\">(client symbol; \(HTML.esc(why)))</span>"
                } else {
                    out += "<span class=\"fn\">\(HTML.esc(moduleName))+\(offset)</span><span class=\"loc\">(\(HTML.esc(why)))</span>"
                }
            }
            // How a minidump's walk found the frame: a `scan` frame may be a stale return address.
            if let t = f.trust { out += "<span class=\"trust\" title=\"how the stackwalker found this frame\">\(HTML.esc(t))</span>" }
            // Only a frame with an address has a module and an offset to show.
            if f.moduleOffset != nil || f.buildID != nil {
                out += "<details><summary>module and address</summary>\(HTML.esc(f.module ?? "?")) + \(offset)"
                out += f.buildID.map { " · build-id \(HTML.esc($0.hex))" } ?? ""
                out += f.isReturnAddress ? " · return address" : " · faulting address"
                out += "</details>"
            }
            out += "</div>"
        }
        return out + "</div>"
    }

    /// The function's short name (`Shop.fetch(id:)`) with the full one (`Shop.fetch(id: Swift.Int)
    /// async throws -> Shop.Item`) behind a <details>, when the two differ; the name alone otherwise.
    static func name(_ f: SymbolicatedStack.Frame, _ location: String) -> String {
        let full = f.function ?? "?"
        guard let short = f.shortFunction, !short.isEmpty, short != full else { return "<span class=\"fn\">\(HTML.esc(full))</span>" + location }
        return "<details class=\"name\"><summary title=\"show the full name\"><span class=\"fn\">\(HTML.esc(short))</span>\(location)</summary>"
            + "<span class=\"fn-full\">\(HTML.esc(full))</span></details>"
    }

    /// The lines around a symbolicated frame's: from the sources uploaded with its debug file, else
    /// from the event (a client that sent `context_line`); nothing when neither has them.
    static func sourceHTML(_ f: SymbolicatedStack.Frame, _ sources: SourceLines?) -> String {
        if let sources, let b = f.buildID, let file = f.file, let line = f.line, let (first, lines) = sources.around(buildID: b, path: file, line: line) {
            return linesHTML(first: Int64(first), lines, current: line - first)
        }
        return f.clientSource.map(sourceHTML) ?? ""
    }

    static func location(_ f: SymbolicatedStack.Frame) -> String {
        guard let file = f.file else { return "" }
        var s = HTML.esc(file)
        if let l = f.line { s += ":\(l)" }
        if let c = f.column, c > 0 { s += ":\(c)" }
        return "<span class=\"loc\">\(s)</span>"
    }

    /// The lines around a client-resolved frame's, numbered, the frame's own emphasised (nothing
    /// when the client sent none).
    static func sourceHTML(_ source: ClientSourceFrame) -> String {
        guard let context = source.context else { return "" }
        return linesHTML(first: source.line.map { $0 - Int64(source.pre.count) }, source.pre + [context] + source.post, current: source.pre.count)
    }

    /// Numbered lines (no numbers when `first` is nil), the `current`th emphasised.
    static func linesHTML(first: Int64?, _ lines: [String], current: Int) -> String {
        var rows = ""
        for (i, text) in lines.enumerated() {
            let gutter = first.map { String($0 + Int64(i)).padding(toLength: 6, withPad: " ", startingAt: 0) } ?? ""
            rows += "<span class=\"\(i == current ? "cur" : "ctx")\">\(gutter)\(HTML.esc(HTML.clip(text, 300)))</span>"
        }
        return "<pre class=\"source\">\(rows)</pre>"
    }

    /// A frame's local variables, when the project keeps them (docs/SERVER.md, "Grouping").
    static func variablesHTML(_ source: ClientSourceFrame) -> String {
        guard !source.variables.isEmpty else { return "" }
        var rows = ""
        for v in source.variables { rows += "<tr><th>\(HTML.esc(v.name))</th><td>\(HTML.esc(v.value))</td></tr>" }
        return
            "<details class=\"vars\"><summary>\(source.variables.count) local variable\(source.variables.count == 1 ? "" : "s")</summary><table>\(rows)</table></details>"
    }
}
