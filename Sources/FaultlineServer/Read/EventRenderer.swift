// Reading side of symbolication: a stored event is shown with the server's symbols applied at
// read time (the raw event stays as the client sent it), and an issue's representative stack.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

public enum EventRenderer {
    /// Innermost-first frames of the crashing stack, with inlined frames expanded. Swift async
    /// callers carry `async: true`; Faultline's own frames (thread-start wrapper, handler) are
    /// left out unless `faultlineFrames`. Frames in `pending` (ReadSymbolication still looking them
    /// up) are shown unsymbolicated with `symbolicator_status: "pending"`.
    public static func stack(
        of event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup> = [],
        faultlineFrames: Bool = false
    ) -> [JSONValue] {
        let (_, frames) = StackExtractor.frames(of: event)
        var out: [JSONValue] = []
        for f in frames {
            var base: [String: JSONValue] = ["in_app": .bool(f.inApp), "offset": .string("0x" + String(f.offset, radix: 16))]
            if f.isFaultline {
                if !faultlineFrames { continue }
                base["faultline"] = true
            }
            if let b = f.buildID { base["build_id"] = .string(b.hex) }
            if let m = f.module { base["module"] = .string(m) }
            if f.isAsync { base["async"] = true }
            if let b = f.buildID, pending.contains(FrameLookup(buildID: b, offset: f.offset, isReturnAddress: f.isReturnAddress)) {
                var o = base
                o["symbolicated"] = false
                o["symbolicator_status"] = "pending"
                if let fn = f.clientFunction { o["function"] = .string(fn) }
                out.append(.object(o))
                continue
            }
            // Without a build-id there is nothing to look up: in no image, or in one without an id.
            let outcome =
                f.buildID.map { symbolicator.resolve(buildID: $0, modulePath: f.module, offset: f.offset, isReturnAddress: f.isReturnAddress) }
                ?? .unresolved(f.module == nil ? .notInAnyModule : .missingDebugFile)
            switch outcome {
            case .resolved(let resolved):
                if resolved.allSatisfy({ FaultlineOwnFrames.isOwn(function: $0.function, rawFunction: $0.mangledFunction) }) {
                    if !faultlineFrames { continue }
                    base["faultline"] = true
                    base["in_app"] = false
                }
                for r in resolved {
                    var o = base
                    o["symbolicated"] = true
                    o["inlined"] = .bool(r.isInlined)
                    if let fn = r.function {
                        o["function"] = .string(CrashEvent.readableFunctionName(fn))
                        if CrashEvent.readableFunctionName(fn) != fn { o["raw_function"] = .string(fn) }
                    }
                    if let file = r.file { o["filename"] = .string(file) }
                    if let l = r.line { o["lineno"] = .int(Int64(l)) }
                    if let c = r.column { o["colno"] = .int(Int64(c)) }
                    out.append(.object(o))
                }
            case .unresolved(let reason):
                var o = base
                o["symbolicated"] = false
                // The same status names `faultline symbolicate` writes into events.
                o["symbolicator_status"] = .string(reason.rawValue)
                if let fn = f.clientFunction { o["function"] = .string(fn) }
                out.append(.object(o))
            }
        }
        return out
    }

    /// The event as the client sent it, plus `symbolicated_stack`: the crashing stack with the
    /// server's current symbols, innermost first (inlined frames expanded).
    public static func render(_ event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup> = []) -> JSONValue {
        var e = event
        e["symbolicated_stack"] = .array(stack(of: event, symbolicator: symbolicator, pending: pending))
        return e
    }

    /// The addresses `stack(of:)` looks up (frames with a build-id), for ReadSymbolication.settle.
    public static func lookups(of event: JSONValue) -> [FrameLookup] {
        StackExtractor.frames(of: event).1.compactMap { f in
            f.buildID.map { FrameLookup(buildID: $0, offset: f.offset, isReturnAddress: f.isReturnAddress) }
        }
    }

    /// The read responses' `symbolication` field: whether every frame had its answer.
    public static func status(_ pending: Set<FrameLookup>) -> JSONValue { pending.isEmpty ? "complete" : "pending" }
}
