// The symbolicated-stack model as the server builds it at read time: the frames the client sent
// (StackExtractor, as grouping reads them), each looked up with the server's current symbols.
// The API's stack and the issue page format what this builds.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

enum ReadTimeStack {
    /// The crashing stack. Frames in `pending` (ReadSymbolication still looking them up) are
    /// `.pending`, with the name the client sent if any.
    static func crashing(in event: JSONValue, symbolicator: FrameSymbolicating, pending: Set<FrameLookup>) -> SymbolicatedStack {
        build(StackExtractor.framesWithJSON(of: event), symbolicator: symbolicator, pending: pending)
    }

    /// Any stack of the event, innermost first as StackExtractor reads it.
    static func build(
        _ withJSON: [(frame: StackFrame, json: JSONValue)], symbolicator: FrameSymbolicating, pending: Set<FrameLookup>
    ) -> SymbolicatedStack {
        var stack = SymbolicatedStack(frames: [])
        for (f, json) in withJSON {
            // A frame the client sent without an address (Python, JavaScript, PHP…) has no offset.
            let hasAddress = json["instruction_addr"] != nil
            var address = SymbolicatedStack.Frame(
                physicalIndex: 0, moduleOffset: hasAddress ? f.offset : nil, module: f.module, buildID: f.buildID, isReturnAddress: f.isReturnAddress,
                outcome: .notLookedUp, role: .system)
            address.isAsync = f.isAsync
            address.trust = SymbolicatedStack.Frame.trust(of: json)
            // What the client said about the frame (file, line, lines around it): all a frame
            // without an address has, and what a native frame shows until its debug file arrives
            // (sentry-rust and others resolve their frames in the process).
            address.clientSource = ClientSourceFrame(json)
            let outcome: SymbolicationOutcome?
            if let b = f.buildID, pending.contains(f.lookup(buildID: b)) {
                outcome = nil
            } else if let b = f.buildID {
                outcome = symbolicator.resolve(
                    buildID: b, modulePath: f.module, offset: f.offset, isReturnAddress: f.isReturnAddress, architecture: f.architecture)
            } else {
                // Nothing to look up: in no image, or in one without an id.
                outcome = .unresolved(f.module == nil ? .notInAnyModule : .missingDebugFile)
            }
            stack.append(address, markedOwn: f.isFaultline, inApp: f.inApp, clientFunction: f.clientFunction, outcome: outcome)
        }
        return stack
    }
}
