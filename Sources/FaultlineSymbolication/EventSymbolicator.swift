// Fills in the frames of a Sentry event (native platform) from its debug_meta images.
import FaultlineProtocol

/// Symbolicates every stack trace of a Sentry event: `exception.values[].stacktrace` and
/// `threads.values[].stacktrace`. Frames are caller-first (Sentry's order); an address with
/// inlined calls becomes several frames, the out-of-line function first and the innermost
/// inlined call last, so the event reads like the stack it stands for.
///
/// Idempotent: frames this added for inlined calls carry `data.faultline_inlined = true` and are
/// dropped before a re-run, so the server can symbolicate the same event again when a debug file
/// arrives late (backfill).
public enum EventSymbolicator {
    /// Returns the new event and how many original frames were resolved and not resolved.
    public static func symbolicate(event: JSONValue, with symbolicator: Symbolicator) -> (event: JSONValue, resolved: Int, unresolved: Int) {
        let images = (event["debug_meta"]?["images"]?.arrayValue ?? []).compactMap(Image.init)
        var resolved = 0, unresolved = 0
        func fix(_ container: JSONValue?) -> JSONValue? {
            guard var c = container, var values = c["values"]?.arrayValue else { return container }
            for i in values.indices {
                guard let st = values[i]["stacktrace"], st.objectValue != nil else { continue }
                let (newST, r, u) = symbolicate(stacktrace: st, images: images, symbolicator: symbolicator)
                values[i]["stacktrace"] = newST
                resolved += r; unresolved += u
            }
            c["values"] = .array(values)
            return c
        }
        var out = event
        if let e = fix(event["exception"]) { out["exception"] = e }
        if let t = fix(event["threads"]) { out["threads"] = t }
        return (out, resolved, unresolved)
    }

    /// One `debug_meta.images` entry.
    struct Image {
        var codeID: BuildID?
        var base: UInt64
        var size: UInt64
        var codeFile: String?

        init?(_ j: JSONValue) {
            guard let base = EventSymbolicator.address(j["image_addr"]) else { return nil }
            self.base = base
            self.size = EventSymbolicator.address(j["image_size"]) ?? 0
            self.codeID = j["code_id"]?.stringValue.flatMap(BuildID.init(hex:))
            self.codeFile = j["code_file"]?.stringValue
        }

        func contains(_ a: UInt64) -> Bool { a >= base && (size == 0 || a - base < size) }
    }

    /// Sentry writes addresses as "0x…" strings; accept integers too.
    static func address(_ v: JSONValue?) -> UInt64? {
        guard let v else { return nil }
        if let s = v.stringValue { return Address(string: s)?.value }
        if let i = v.int64Value, i >= 0 { return UInt64(i) }
        return nil
    }

    static func symbolicate(stacktrace: JSONValue, images: [Image], symbolicator: Symbolicator) -> (JSONValue, Int, Int) {
        var st = stacktrace
        // Drop frames a previous run added for inlined calls; the out-of-line frame remains.
        let original = (st["frames"]?.arrayValue ?? []).filter { $0["data"]?["faultline_inlined"]?.boolValue != true }
        let adjustment = st["instruction_addr_adjustment"]?.stringValue ?? "auto"
        var out: [JSONValue] = []
        var resolved = 0, unresolved = 0
        for (i, frame) in original.enumerated() {
            guard let addr = address(frame["instruction_addr"]), addr != 0 else { out.append(frame); continue }
            // Caller-first: the crashing frame is the last one, the only exact program counter.
            var isReturn: Bool
            switch adjustment {
            case "all": isReturn = true
            case "none": isReturn = false
            default: isReturn = i != original.count - 1
            }
            // A Swift async frame's address is its resume function's entry: exact, not a return address.
            let isAsync = frame["data"]?["faultline_async"]?.boolValue == true
            if isAsync { isReturn = false }
            let frameBase = address(frame["image_addr"])
            let image = images.first { img in frameBase.map { $0 == img.base } ?? img.contains(addr) } ?? images.first { $0.contains(addr) }
            let outcome: SymbolicationOutcome
            if let image {
                outcome = symbolicator.symbolicate(buildID: image.codeID, modulePath: image.codeFile,
                                                   relativeAddress: addr &- image.base, isReturnAddress: isReturn)
            } else {
                outcome = .unresolved(.notInAnyModule)
            }
            switch outcome {
            case .unresolved(let reason):
                unresolved += 1
                var f = frame
                f["data"] = mergedData(frame["data"], ["symbolicator_status": .string(reason.rawValue)])
                out.append(f)
            case .resolved(let frames):
                resolved += 1
                for (k, sf) in frames.reversed().enumerated() {
                    out.append(render(sf, base: frame, inlinedCopy: k > 0))
                }
            }
        }
        st["frames"] = .array(out)
        return (st, resolved, unresolved)
    }

    private static func mergedData(_ old: JSONValue?, _ new: [String: JSONValue]) -> JSONValue {
        var d = old?.objectValue ?? [:]
        for (k, v) in new { d[k] = v }
        return .object(d)
    }

    private static func render(_ sf: SymbolicatedFrame, base: JSONValue, inlinedCopy: Bool) -> JSONValue {
        var f = base
        for k in ["function", "raw_function", "symbol", "filename", "abs_path", "lineno", "colno"] { f[k] = nil }
        if let fn = sf.function { f["function"] = .string(Demangler.readableAsync(fn)) }
        if let raw = sf.mangledFunction { f["raw_function"] = .string(raw); f["symbol"] = .string(raw) }
        if let file = sf.file {
            f["abs_path"] = .string(file)
            f["filename"] = .string(file)
        }
        if let l = sf.line, sf.file != nil { f["lineno"] = .int(Int64(l)) }
        if let c = sf.column, c > 0, sf.file != nil { f["colno"] = .int(Int64(c)) }
        var data: [String: JSONValue] = ["symbolicator_status": "symbolicated"]
        if inlinedCopy { data["faultline_inlined"] = true }
        if sf.isInlined { data["inlined"] = true }
        if sf.fromSymbolTable { data["faultline_symbol_table_only"] = true }
        // Faultline's own frames (thread-start wrapper, signal handler) are not the app's code.
        if CrashEvent.isFaultlineFrame(function: sf.function, rawFunction: sf.mangledFunction) {
            data["faultline_sdk"] = true
            f["in_app"] = false
        }
        f["data"] = mergedData(base["data"], data)
        if !inlinedCopy, var d = f["data"]?.objectValue { d["faultline_inlined"] = nil; f["data"] = .object(d) }
        return f
    }
}
