// The frames grouping looks at, stored once per distinct stack so backfill works per stack.
import Foundation
import FaultlineProtocol
import FaultlineHashing

/// One frame of the crashing stack as the client sent it, reduced to what identifies the code.
public struct StackFrame: Sendable, Hashable {
    public var buildID: BuildID?
    /// Address relative to the module's load address (or absolute when no module matched).
    public var offset: UInt64
    /// Return addresses point after the call; the symbolicator looks up the call before them
    /// (`architecture.callSite(ofReturnAddress:)`).
    public var isReturnAddress: Bool
    /// The architecture the frame's code ran on (its image's, else the event's): how far back
    /// from a return address the call lies. Encoded only when not x86_64, so stacks stored
    /// before aarch64 support keep their keys.
    public var architecture: CPUArchitecture = .ofEventsWithoutArch
    public var inApp: Bool
    public var module: String?
    /// A function name the client put in the event (e.g. from its own symbol table).
    public var clientFunction: String?
    /// A Swift async caller (`data.faultline_async`): its offset is a resume function's entry.
    public var isAsync = false
    /// Faultline's own code as the client knew it (FaultlineOwnFrames: marked by the crash core
    /// or in a preload library); by name, once symbolicated, is decided where names are known.
    public var isFaultline = false
    /// A non-native frame's module (or file) under grouping rules that group by it
    /// (GroupingConfig.v2); nil otherwise, and then not encoded, so earlier stacks keep their keys.
    public var sourceModule: String?
    /// Grouping rules 4: a non-native frame without a function, by its source line (the frame's
    /// `context_line`, trimmed); nil otherwise, and then not encoded.
    public var sourceLine: String?

    var json: JSONValue {
        var o: [String: JSONValue] = ["o": .int(Int64(bitPattern: offset)), "r": .bool(isReturnAddress), "a": .bool(inApp)]
        if let b = buildID { o["b"] = .string(b.hex) }
        if let m = module { o["m"] = .string(m) }
        if let f = clientFunction { o["f"] = .string(f) }
        if isAsync { o["y"] = true }  // only when set: signatures stored before async frames are unchanged
        if let s = sourceModule { o["s"] = .string(s) }
        if let l = sourceLine { o["l"] = .string(l) }
        if architecture != .ofEventsWithoutArch { o["c"] = .string(architecture.rawValue) }
        return .object(o)
    }

    init(buildID: BuildID?, offset: UInt64, isReturnAddress: Bool, inApp: Bool, module: String?, clientFunction: String?, isAsync: Bool = false) {
        self.buildID = buildID; self.offset = offset; self.isReturnAddress = isReturnAddress
        self.inApp = inApp; self.module = module; self.clientFunction = clientFunction; self.isAsync = isAsync
    }

    init?(json: JSONValue) {
        guard let o = json["o"]?.int64Value else { return nil }
        offset = UInt64(bitPattern: o)
        isReturnAddress = json["r"]?.boolValue ?? false
        inApp = json["a"]?.boolValue ?? false
        buildID = json["b"]?.stringValue.flatMap(BuildID.init(hex:))
        module = json["m"]?.stringValue
        clientFunction = json["f"]?.stringValue
        isAsync = json["y"]?.boolValue ?? false
        sourceModule = json["s"]?.stringValue
        sourceLine = json["l"]?.stringValue
        architecture = json["c"]?.stringValue.flatMap(CPUArchitecture.init(rawValue:)) ?? .ofEventsWithoutArch
    }
}

/// The grouping-relevant frames of one event (innermost first) plus exception type, with a
/// content key so identical stacks from many occurrences are stored and regrouped once.
public struct StackSignature: Sendable, Hashable {
    public var exceptionType: String
    public var frames: [StackFrame]
    /// What the crash said (a Swift fatal error's text, a C++ exception's what(), an assert's
    /// expression), for the issue title only: it often embeds a varying value, so it is part of
    /// neither the grouping hash nor the stack key. Empty when the event has no such message.
    public var headline: String
    /// For a message without a stack or an exception (`capture_message`, a `logging` error): what
    /// groups it (StackExtractor.messageGroup: its template, or its text as a pattern). Part of the
    /// key; empty otherwise, and then not encoded, so stacks stored before it keep their keys.
    public var messageGroup: String
    /// The client's `fingerprint` (Sentry's: a list of strings, `{{ default }}` standing for the
    /// grouping the server would compute). Part of the key; empty when the client sent none, and
    /// then not encoded.
    public var clientFingerprint: [String] = []
    /// Grouping rules 3 and later: a Rust legacy name's `::h<16 hex>` hash is left out of the
    /// components (`Demangler.withoutRustHash`). Part of the key when set; not encoded otherwise,
    /// so stacks grouped under earlier rules keep their keys and their issues.
    public var dropsRustHashes = false
    /// Grouping rules 4: the types of the exceptions that caused this one (`raise … from`, Java's
    /// causes, .NET's inner exceptions), oldest first; part of the key and the hash when set, not
    /// encoded otherwise.
    public var causes: [String] = []

    public init(exceptionType: String, frames: [StackFrame], headline: String = "", messageGroup: String = "") {
        self.exceptionType = exceptionType
        self.frames = frames
        self.headline = headline
        self.messageGroup = messageGroup
    }

    public var encoded: Data {
        var o: [String: JSONValue] = ["t": .string(exceptionType), "f": .array(frames.map(\.json))]
        if !headline.isEmpty { o["m"] = .string(headline) }
        if !messageGroup.isEmpty { o["g"] = .string(messageGroup) }
        if !clientFingerprint.isEmpty { o["p"] = .array(clientFingerprint.map(JSONValue.string)) }
        if dropsRustHashes { o["r"] = true }
        if !causes.isEmpty { o["x"] = .array(causes.map(JSONValue.string)) }
        return JSONValue.object(o).serialized()
    }

    public static func decode(_ data: Data) -> StackSignature? {
        guard let v = try? JSONParser.parse(data), let fs = v["f"]?.arrayValue else { return nil }
        var signature = StackSignature(
            exceptionType: v["t"]?.stringValue ?? "", frames: fs.compactMap(StackFrame.init(json:)),
            headline: v["m"]?.stringValue ?? "", messageGroup: v["g"]?.stringValue ?? "")
        signature.clientFingerprint = v["p"]?.arrayValue?.compactMap(\.stringValue) ?? []
        signature.dropsRustHashes = v["r"]?.boolValue == true
        signature.causes = v["x"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return signature
    }

    /// SHA-1 of the encoding without the headline: stable across restarts and servers, and the
    /// same for one crash site whatever its messages said (the first one stored is kept).
    public var key: String {
        var keyed = self
        keyed.headline = ""
        return SHA1Hash.hex(keyed.encoded)
    }

    /// The encoding and its key, computed once (callers keep both).
    public var encodedWithKey: (data: Data, key: String) { (encoded, key) }

    /// Build-ids this stack needs symbols for.
    public var buildIDs: Set<BuildID> { Set(frames.compactMap(\.buildID)) }
}
