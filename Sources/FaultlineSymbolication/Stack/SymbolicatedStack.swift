// The one model of a symbolicated stack that every renderer formats: the CLI's backtrace text,
// the API's stack JSON and the issue page's HTML. Built once where each gets its stack (from an
// event a symbolicator filled in, or from the server's lookups at read time), so what a frame is
// (its names, place, outcome and role) is decided here and never again by a renderer.
import FaultlineProtocol

/// A stack, innermost frame first, with inlined calls expanded: the frames inlined at one address
/// come before the function they were inlined into and share its `physicalIndex`.
public struct SymbolicatedStack: Sendable, Hashable {
    public var frames: [Frame]

    public init(frames: [Frame]) { self.frames = frames }

    /// The frames of each address, innermost address first; within one, innermost call first and
    /// the out-of-line function last.
    public var physicalFrames: [ArraySlice<Frame>] {
        var out: [ArraySlice<Frame>] = []
        var start = frames.startIndex
        for i in frames.indices where i + 1 == frames.endIndex || frames[i + 1].physicalIndex != frames[i].physicalIndex {
            out.append(frames[start...i])
            start = i + 1
        }
        return out
    }
}

extension SymbolicatedStack {
    /// One call: a function at an address, or the address alone when it could not be named.
    public struct Frame: Sendable, Hashable {
        /// Which address this call belongs to (0 for the innermost address).
        public var physicalIndex: Int
        /// The absolute address the client sent, when it sent one.
        public var instructionAddress: UInt64?
        /// The address relative to its module's load address, when the module is known.
        public var moduleOffset: UInt64?
        public var module: String?
        public var buildID: BuildID?
        /// Return addresses point after the call (every frame but the innermost, usually).
        public var isReturnAddress: Bool
        /// The readable full name (`Shop.fetch(id: Swift.Int) async -> ()`, `ns::f<int>(int)`),
        /// or the name the client sent when the address was not looked up or not found.
        public var function: String?
        /// The full name as the symbolicator gave it, when the readable form cut a prefix off it
        /// (`(1) await resume partial function for …`).
        public var fullFunction: String?
        /// The short name (`Shop.fetch(id:)`, `ns::f<int>`); the full one for C.
        public var shortFunction: String?
        /// The linkage (mangled) name, when the binary's differs from `function`.
        public var mangledFunction: String?
        public var file: String?
        public var line: Int?
        /// 0 when the line table gave no column.
        public var column: Int?
        /// Inlined into the next frame (same `physicalIndex`).
        public var isInlined: Bool
        /// A Swift async caller: its address is a resume function's entry.
        public var isAsync: Bool
        /// The line table said line 0 here; file and line are the nearest meaningful ones.
        public var isInferred: Bool
        /// Named from the ELF symbol table: no DWARF, no line.
        public var isSymbolTableOnly: Bool
        public var outcome: Outcome
        public var role: Role
        /// A frame the client resolved itself (Python, JavaScript): its source lines.
        public var clientSource: ClientSourceFrame?
        /// How a stackwalker found the frame, for frames walked from a minidump: Sentry's `trust`
        /// (`context`, `cfi`, `fp`, `scan`); nil for a frame the client unwound itself.
        public var trust: String?

        /// Sentry's trust names that Faultline's walker writes (best first), and the others
        /// Sentry's own stackwalker knows.
        public static let trustNames: Set<String> = ["context", "cfi", "fp", "scan", "cfi_scan", "prewalked", "inline", "none"]

        /// An event frame's `trust`, when it is a stackwalker's name (the event may be a client's:
        /// any other text is not shown).
        public static func trust(of frame: JSONValue) -> String? {
            guard let t = frame["trust"]?.stringValue, trustNames.contains(t) else { return nil }
            return t
        }

        public init(
            physicalIndex: Int, instructionAddress: UInt64? = nil, moduleOffset: UInt64? = nil, module: String? = nil,
            buildID: BuildID? = nil, isReturnAddress: Bool = false, outcome: Outcome, role: Role
        ) {
            self.physicalIndex = physicalIndex
            self.instructionAddress = instructionAddress
            self.moduleOffset = moduleOffset
            self.module = module
            self.buildID = buildID
            self.isReturnAddress = isReturnAddress
            self.isInlined = false
            self.isAsync = false
            self.isInferred = false
            self.isSymbolTableOnly = false
            self.outcome = outcome
            self.role = role
        }
    }

    /// What symbolication made of a frame's address.
    public enum Outcome: Sendable, Hashable {
        case symbolicated
        /// Looked up, and why nothing was found (shown: it says what to upload).
        case unresolved(UnresolvedReason)
        /// The server is still looking it up; a reload shows the answer.
        case pending
        /// Never looked up: no address, or a status this symbolicator did not write.
        case notLookedUp
    }
}

extension SymbolicatedStack.Outcome {
    /// Why the address has no name, when it was looked up and none was found.
    public var unresolvedReason: UnresolvedReason? { if case .unresolved(let r) = self { return r } else { return nil } }
}
