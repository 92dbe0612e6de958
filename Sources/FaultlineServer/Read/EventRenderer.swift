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
        json(ReadTimeStack.crashing(in: event, symbolicator: symbolicator, pending: pending), faultlineFrames: faultlineFrames)
    }

    /// The model's frames as the API writes them.
    static func json(_ stack: SymbolicatedStack, faultlineFrames: Bool) -> [JSONValue] {
        stack.frames.compactMap { f in
            if f.role == .faultline && !faultlineFrames { return nil }
            var o: [String: JSONValue] = ["in_app": .bool(f.role == .inApp), "offset": .string("0x" + String(f.moduleOffset ?? 0, radix: 16))]
            if f.role == .faultline { o["faultline"] = true }
            if let b = f.buildID { o["build_id"] = .string(b.hex) }
            if let m = f.module { o["module"] = .string(m) }
            if f.isAsync { o["async"] = true }
            if let t = f.trust { o["trust"] = .string(t) }
            if let fn = f.function { o["function"] = .string(fn) }
            switch f.outcome {
            case .symbolicated:
                o["symbolicated"] = true
                o["inlined"] = .bool(f.isInlined)
                if let full = f.fullFunction, full != f.function { o["raw_function"] = .string(full) }
                if let file = f.file { o["filename"] = .string(file) }
                if let l = f.line { o["lineno"] = .int(Int64(l)) }
                if let c = f.column { o["colno"] = .int(Int64(c)) }
            case .unresolved(let reason):
                o["symbolicated"] = false
                // The client's own file and line, when it sent them (and the server has no better).
                if let source = f.clientSource {
                    o["filename"] = .string(source.file)
                    if let l = source.line { o["lineno"] = .int(l) }
                    if let c = source.column { o["colno"] = .int(c) }
                }
                // The same status names `faultline symbolicate` writes into events.
                o["symbolicator_status"] = .string(reason.rawValue)
            case .pending:
                o["symbolicated"] = false
                o["symbolicator_status"] = "pending"
            case .notLookedUp:
                o["symbolicated"] = false
            }
            return .object(o)
        }
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
            f.buildID.map(f.lookup(buildID:))
        }
    }

    /// The read responses' `symbolication` field: whether every frame had its answer.
    public static func status(_ pending: Set<FrameLookup>) -> JSONValue { pending.isEmpty ? "complete" : "pending" }
}
