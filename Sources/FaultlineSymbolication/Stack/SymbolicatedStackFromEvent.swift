// The model built from an event's stacktrace once a symbolicator has filled it in (EventSymbolicator,
// or any Sentry client that symbolicates): what `faultline symbolicate` renders.
import FaultlineProtocol

extension SymbolicatedStack {
    /// `stacktrace` is Sentry's (caller first, inlined calls as extra frames marked
    /// `data.faultline_inlined` after the function they were inlined into).
    public init(symbolicatedStacktrace stacktrace: JSONValue) {
        var frames: [Frame] = []
        var physical = 0
        for json in (stacktrace["frames"]?.arrayValue ?? []).reversed() {
            frames.append(Self.frame(json, physicalIndex: physical))
            // A copy added for an inlined call shares the address of the frame after it.
            if json["data"]?["faultline_inlined"]?.boolValue != true { physical += 1 }
        }
        self.init(frames: frames)
    }

    static func frame(_ json: JSONValue, physicalIndex: Int) -> Frame {
        let data = json["data"]
        let address = SentryStackTrace.address(json["instruction_addr"])
        let base = SentryStackTrace.address(json["image_addr"])
        let status = data?["symbolicator_status"]?.stringValue
        let outcome: Outcome =
            status == "symbolicated" ? .symbolicated : status.flatMap(UnresolvedReason.init(rawValue:)).map(Outcome.unresolved) ?? .notLookedUp
        let module = json["package"]?.stringValue
        let function = json["function"]?.stringValue
        let mangled = json["raw_function"]?.stringValue
        var f = Frame(
            physicalIndex: physicalIndex, instructionAddress: address,
            moduleOffset: address.flatMap { a in base.flatMap { a >= $0 ? a - $0 : nil } }, module: module,
            buildID: nil, isReturnAddress: physicalIndex > 0, outcome: outcome,
            role: .of(
                markedOwn: FaultlineOwnFrames.isMarked(json), module: module, function: function, mangledFunction: mangled,
                inApp: json["in_app"]?.boolValue == true))
        f.function = function
        f.fullFunction = function
        f.mangledFunction = mangled
        f.shortFunction = mangled.flatMap { Demangler.demangle($0, style: .short) } ?? function
        f.file = json["filename"]?.stringValue ?? json["abs_path"]?.stringValue
        f.line = json["lineno"]?.int64Value.map { Int($0) }
        f.column = json["colno"]?.int64Value.map { Int($0) }
        f.isInlined = data?["inlined"]?.boolValue == true
        f.isAsync = data?["faultline_async"]?.boolValue == true
        f.isInferred = data?["faultline_inferred"]?.boolValue == true
        f.trust = Frame.trust(of: json)
        f.isSymbolTableOnly = data?["faultline_symbol_table_only"]?.boolValue == true
        if address == nil { f.clientSource = ClientSourceFrame(json) }
        return f
    }
}
