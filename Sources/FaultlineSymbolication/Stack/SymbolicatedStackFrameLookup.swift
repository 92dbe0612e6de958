// The model's frames for one address from a symbolicator's answer: what a reader that looks
// addresses up itself (the server, at read time) builds its stack from.
import FaultlineProtocol

extension SymbolicatedStack {
    /// The address's frames, innermost call first. `address` carries what the client knew:
    /// its place, its role (`markedOwn`, `inApp`) and the name it sent (`clientFunction`), which
    /// stands when the lookup found nothing.
    public mutating func append(
        _ address: Frame, markedOwn: Bool, inApp: Bool, clientFunction: String?, outcome lookup: SymbolicationOutcome?
    ) {
        var frame = address
        frame.physicalIndex = (frames.last?.physicalIndex).map { $0 + 1 } ?? 0
        guard let lookup else {
            // Still being looked up.
            frame.outcome = .pending
            frame.function = clientFunction
            frame.role = .of(markedOwn: markedOwn, module: frame.module, function: clientFunction, mangledFunction: nil, inApp: inApp)
            frames.append(frame)
            return
        }
        guard case .resolved(let resolved) = lookup, !resolved.isEmpty else {
            frame.outcome = .unresolved(lookup.reason ?? .noDebugInfoForAddress)
            frame.function = clientFunction
            frame.role = .of(markedOwn: markedOwn, module: frame.module, function: clientFunction, mangledFunction: nil, inApp: inApp)
            frames.append(frame)
            return
        }
        for r in resolved {
            var call = frame
            call.outcome = .symbolicated
            call.function = r.function.map(CrashEvent.readableFunctionName)
            call.fullFunction = r.function
            call.shortFunction = r.shortFunction.map(CrashEvent.readableFunctionName)
            call.mangledFunction = r.mangledFunction
            call.file = r.file
            call.line = r.line
            call.column = r.column
            call.isInlined = r.isInlined
            call.isInferred = r.isInferred
            call.isSymbolTableOnly = r.fromSymbolTable
            call.role = .of(markedOwn: markedOwn, module: frame.module, function: r.function, mangledFunction: r.mangledFunction, inApp: inApp)
            frames.append(call)
        }
    }
}

extension SymbolicationOutcome {
    /// Why there are no frames, when there are none.
    public var reason: UnresolvedReason? { if case .unresolved(let r) = self { return r } else { return nil } }
}
