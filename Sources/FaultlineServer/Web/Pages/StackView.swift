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
        let (_, frames) = StackExtractor.frames(of: event)
        guard !frames.isEmpty else { return "<p class=\"muted\">This event has no stack.</p>" }
        var out = pending.isEmpty ? "" : "<p class=\"muted symbolicating\">Symbolicating… some frames are still being looked up; reload in a moment.</p>"
        out += "<div class=\"stack\">"
        for (n, f) in frames.enumerated() {
            let isPending = f.buildID.map { pending.contains(FrameLookup(buildID: $0, offset: f.offset, isReturnAddress: f.isReturnAddress)) } ?? false
            let resolved = isPending ? [] : f.buildID.flatMap { symbolicator.resolve(buildID: $0, modulePath: f.module, offset: f.offset, isReturnAddress: f.isReturnAddress).frames } ?? []
            let moduleName = f.module.map { ($0 as NSString).lastPathComponent } ?? f.buildID.map { String($0.hex.prefix(12)) } ?? "?"
            // Faultline's own frames (FaultlineOwnFrames) stay visible, dimmed: they explain the
            // stack's shape (the terminate handler between a throw and abort) but are never the app's.
            let own = f.isFaultline || (!resolved.isEmpty && resolved.allSatisfy { FaultlineOwnFrames.isOwn(function: $0.function, rawFunction: $0.mangledFunction) })
            let classes = "frame " + (f.inApp && !own ? "inapp" : "system") + (own ? " own" : "") + (n == 0 ? " crashed" : "")
            out += "<div class=\"\(classes)\"" + (own ? " title=\"Faultline's own code\">" : ">")
            // The symbolicator lists inlined frames innermost first and the physical function last.
            if let physical = resolved.last {
                out += "<span class=\"fn\">\(HTML.esc(physical.function ?? "?"))</span>" + location(physical)
                for inl in resolved.dropLast() {
                    out += "<div class=\"inl\"><span class=\"badge\">inlined</span><span class=\"fn\">\(HTML.esc(inl.function ?? "?"))</span>\(location(inl))</div>"
                }
            } else if isPending {
                out += "<span class=\"fn\">\(HTML.esc(f.clientFunction ?? moduleName + "+0x" + String(f.offset, radix: 16)))</span><span class=\"loc\">(symbolicating…)</span>"
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
