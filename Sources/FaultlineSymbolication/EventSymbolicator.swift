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
        symbolicate(event: event) { image, address, architecture in
            symbolicator.symbolicate(
                buildID: image.buildID, modulePath: image.codeFile,
                relativeAddress: address.address.value &- image.base.value, isReturnAddress: address.isReturnAddress,
                architecture: architecture)
        }
    }

    /// The same over any lookup: `lookup` gets each framed address with the image it lies in and
    /// the architecture it ran on (FaultlineProtocol's `SentryStackTrace` decides all three, as it
    /// does for the server).
    public static func symbolicate(event: JSONValue, lookup: (DebugImage, FrameAddress, CPUArchitecture) -> SymbolicationOutcome)
        -> (event: JSONValue, resolved: Int, unresolved: Int)
    {
        let images = DebugImageMap(event: event)
        var resolved = 0, unresolved = 0
        func fix(_ container: JSONValue?) -> JSONValue? {
            guard var c = container, var values = c["values"]?.arrayValue else { return container }
            for i in values.indices {
                guard let st = values[i]["stacktrace"], st.objectValue != nil else { continue }
                let (newST, r, u) = symbolicate(stacktrace: st, images: images, lookup: lookup)
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

    static func symbolicate(
        stacktrace: JSONValue, images: DebugImageMap,
        lookup: (DebugImage, FrameAddress, CPUArchitecture) -> SymbolicationOutcome
    ) -> (JSONValue, Int, Int) {
        var st = stacktrace
        var out: [JSONValue] = []
        var resolved = 0, unresolved = 0
        // Frames a previous run added for inlined calls are not read back; the out-of-line frame remains.
        for frame in SentryStackTrace.frames(of: stacktrace, images: images) {
            guard let address = frame.address else { out.append(frame.json); continue }
            let outcome = frame.image.map { lookup($0, address, frame.architecture) } ?? .unresolved(.notInAnyModule)
            switch outcome {
            case .unresolved(let reason):
                unresolved += 1
                var f = frame.json
                f["data"] = mergedData(frame.json["data"], ["symbolicator_status": .string(reason.rawValue)])
                out.append(f)
            case .resolved(let frames):
                resolved += 1
                for (k, sf) in frames.reversed().enumerated() {
                    out.append(render(sf, base: frame.json, inlinedCopy: k > 0))
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
        if sf.isInferred { data["faultline_inferred"] = true }
        f["data"] = mergedData(base["data"], data)
        if FaultlineOwnFrames.isOwn(function: sf.function, rawFunction: sf.mangledFunction), var marked = f.objectValue {
            FaultlineOwnFrames.mark(&marked)
            f = .object(marked)
        }
        if !sf.isInferred, var d = f["data"]?.objectValue, d["faultline_inferred"] != nil { d["faultline_inferred"] = nil; f["data"] = .object(d) }
        if !inlinedCopy, var d = f["data"]?.objectValue { d["faultline_inlined"] = nil; f["data"] = .object(d) }
        return f
    }
}
