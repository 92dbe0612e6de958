// The JSON crash log Swift's runtime backtracer writes (`SWIFT_BACKTRACE=enable=yes,format=json,
// output-to=DIR`): what docs/CRASH-REPORT.md ("Swift runtime JSON crash logs") says is read from it.
import FoundationEssentials

/// A crash log written by `swift-backtrace` (the helper the Swift runtime starts when a program
/// crashes). The log has no format version; it is recognised by `"kind": "crashReport"` and a
/// `threads` array. Fields this reader does not know are ignored, as the backtracer adds some
/// between toolchains.
public struct SwiftBacktraceLog: Sendable, Equatable {
    public struct SourceLocation: Sendable, Equatable {
        public var file: String
        public var line: Int
        public var column: Int
    }

    /// One entry of a thread's `frames`. Inlined calls are entries of their own that share the
    /// address of the out-of-line frame after them (innermost first), marked `inlined`.
    public struct Frame: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            case programCounter(Address)
            case returnAddress(Address)
            /// An async function's continuation: an exact address, like a program counter.
            case asyncResumePoint(Address)
            /// The backtracer left `count` frames out (its `limit`/`top` settings).
            case omittedFrames(Int)
            /// The unwinder stopped here (end of stack, or the `limit` was reached).
            case truncated
        }
        public var kind: Kind
        /// The raw (mangled) symbol and the demangled description (`boom(_:) + 320`), when symbolicated.
        public var symbol: String?
        public var symbolDescription: String?
        public var offset: Int?
        /// The image's name (`libswiftCore.so`), as in `images[].name`.
        public var image: String?
        public var sourceLocation: SourceLocation?
        public var inlined = false
        /// The artificial frame `Swift runtime failure: …` the compiler puts on a trap.
        public var runtimeFailure = false
        public var system = false

        public var address: Address? {
            switch kind {
            case .programCounter(let a), .returnAddress(let a), .asyncResumePoint(let a): return a
            case .omittedFrames, .truncated: return nil
            }
        }
    }

    public struct Thread: Sendable, Equatable {
        public var name: String
        public var crashed: Bool
        /// In the backtracer's order (`CPUArchitecture.swiftBacktracerRegisterNames`).
        public var registers: [Register]
        public var frames: [Frame]
    }

    public struct Register: Sendable, Equatable {
        public var name: String
        public var value: Address
    }

    public struct Image: Sendable, Equatable {
        public var name: String
        public var path: String?
        public var buildID: BuildID?
        /// Where the image is loaded (its ELF header); the backtracer reports the end of its text
        /// only, so the image spans at least `base..<endOfText`.
        public var base: Address
        public var endOfText: Address
        public func contains(_ a: Address) -> Bool { a >= base && a < endOfText }
    }

    /// Seconds since 1970 (the log's ISO 8601 `timestamp`); 0 when absent or unreadable.
    public var timestamp: Double
    /// `Swift runtime failure: …` when the crash was a runtime trap the backtracer recognised,
    /// else the signal's description (`Illegal instruction`, `Bad pointer dereference`, …).
    public var description: String
    public var faultAddress: Address
    public var platform: String
    public var architecture: String
    /// Main thread first, then by thread id (the backtracer's order); thread ids are not in the log.
    public var threads: [Thread]
    /// With `threads=crashed` (not the JSON default) only the crashing thread is listed.
    public var omittedThreads: Int
    /// The images the frames mention (`images=mentioned`, the default) or all of them.
    public var images: [Image]
    public var omittedImages: Int

    public enum ParseError: Error, CustomStringConvertible {
        case notJSON(String)
        case notASwiftBacktraceLog
        case missingField(String)

        public var description: String {
            switch self {
            case .notJSON(let why): return "Swift crash log is not valid JSON (\(why)); it may have been cut short"
            case .notASwiftBacktraceLog: return "not a Swift backtrace crash log (no \"kind\": \"crashReport\" with threads)"
            case .missingField(let f): return "Swift crash log lacks \(f)"
            }
        }
    }

    /// True when `json` claims to be a Swift backtracer crash log (and so must parse as one).
    public static func isCandidate(_ json: JSONValue) -> Bool {
        json["kind"]?.stringValue == "crashReport" && json["threads"] != nil
    }

    public static func parse(_ data: Data) throws(ParseError) -> SwiftBacktraceLog {
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw .notJSON(error.reason) }
        return try SwiftBacktraceLog(json: json)
    }

    public init(json j: JSONValue) throws(ParseError) {
        guard Self.isCandidate(j) else { throw .notASwiftBacktraceLog }
        guard let ts = j["threads"]?.arrayValue else { throw .missingField("threads") }
        threads = ts.map(Self.thread)
        guard threads.contains(where: \.crashed) else { throw .missingField("a thread marked crashed") }
        timestamp = j["timestamp"]?.stringValue.flatMap(SentryTimestamp.preciseSeconds(rfc3339:)) ?? 0
        description = j["description"]?.stringValue ?? ""
        faultAddress = j["faultAddress"]?.stringValue.flatMap(Address.init(string:)) ?? Address(0)
        platform = j["platform"]?.stringValue ?? ""
        architecture = j["architecture"]?.stringValue ?? ""
        omittedThreads = Int(j["omittedThreads"]?.int64Value ?? 0)
        omittedImages = Int(j["omittedImages"]?.int64Value ?? 0)
        images = (j["images"]?.arrayValue ?? []).compactMap(Self.image)
    }

    /// The crashing thread's index in `threads` (the initializer checks there is one).
    public var crashedThreadIndex: Int { threads.firstIndex(where: \.crashed) ?? 0 }

    /// The image whose text holds `a`, else the one a frame names.
    public func image(containing a: Address, named name: String?) -> Image? {
        images.first { $0.contains(a) } ?? name.flatMap { n in images.first { $0.name == n } }
    }

    private static func thread(_ t: JSONValue) -> Thread {
        var regs: [Register] = []
        if let r = t["registers"]?.objectValue {
            // Object member order is lost in parsing; the backtracer's order is restored (the
            // architectures' register names do not overlap, so one list serves every log).
            let known = CPUArchitecture.allCases.flatMap(\.swiftBacktracerRegisterNames)
            let order = known.filter { r[$0] != nil } + r.keys.filter { !known.contains($0) }.sorted()
            for name in order { if let v = r[name]?.stringValue.flatMap(Address.init(string:)) { regs.append(Register(name: name, value: v)) } }
        }
        return Thread(
            name: t["name"]?.stringValue ?? "", crashed: t["crashed"]?.boolValue ?? false,
            registers: regs, frames: (t["frames"]?.arrayValue ?? []).compactMap(frame))
    }

    /// A frame of a kind this reader does not know, or without its address, is skipped.
    private static func frame(_ f: JSONValue) -> Frame? {
        let address = f["address"]?.stringValue.flatMap(Address.init(string:))
        let kind: Frame.Kind
        switch (f["kind"]?.stringValue, address) {
        case ("programCounter", let a?): kind = .programCounter(a)
        case ("returnAddress", let a?): kind = .returnAddress(a)
        case ("asyncResumePoint", let a?): kind = .asyncResumePoint(a)
        case ("omittedFrames", _): kind = .omittedFrames(Int(f["count"]?.int64Value ?? 0))
        case ("truncated", _): kind = .truncated
        default: return nil
        }
        var frame = Frame(kind: kind)
        frame.symbol = f["symbol"]?.stringValue
        frame.symbolDescription = f["description"]?.stringValue
        frame.offset = f["offset"]?.int64Value.map { Int($0) }
        frame.image = f["image"]?.stringValue
        if let s = f["sourceLocation"], let file = s["file"]?.stringValue {
            frame.sourceLocation = SourceLocation(file: file, line: Int(s["line"]?.int64Value ?? 0), column: Int(s["column"]?.int64Value ?? 0))
        }
        frame.inlined = f["inlined"]?.boolValue ?? false
        frame.runtimeFailure = f["runtimeFailure"]?.boolValue ?? false
        frame.system = f["system"]?.boolValue ?? false
        return frame
    }

    private static func image(_ i: JSONValue) -> Image? {
        guard let base = i["baseAddress"]?.stringValue.flatMap(Address.init(string:)) else { return nil }
        let end = i["endOfText"]?.stringValue.flatMap(Address.init(string:)) ?? base
        let path = i["path"]?.stringValue
        return Image(
            name: i["name"]?.stringValue ?? path.map(PathName.last) ?? "",
            path: path, buildID: i["buildId"]?.stringValue.flatMap(BuildID.init(hex:)), base: base, endOfText: end)
    }

    // MARK: What the log says about the crash

    /// The signal, recovered from the description the backtracer gives it (the log has no number).
    public var signal: (number: Int, name: String)? {
        let table: [(String, Int, String)] = [
            ("Illegal instruction", 4, "SIGILL"), ("Bad pointer dereference", 11, "SIGSEGV"), ("Aborted", 6, "SIGABRT"),
            ("Bus error", 7, "SIGBUS"), ("Floating point exception", 8, "SIGFPE"), ("System trap", 5, "SIGTRAP"),
            ("Terminated", 3, "SIGQUIT")
        ]
        if let hit = table.first(where: { $0.0 == description }) { return (hit.1, hit.2) }
        if description.hasPrefix("Signal "), let n = Int(description.dropFirst(7)) { return (n, "SIG\(n)") }
        // A runtime failure is a trap: ud2 raises SIGILL on x86_64, brk SIGTRAP on aarch64.
        if runtimeFailure != nil { return CPUArchitecture(name: architecture) == .aarch64 ? (5, "SIGTRAP") : (4, "SIGILL") }
        return nil
    }

    /// The runtime's own words when the log carries them: `Unexpectedly found nil while
    /// unwrapping an Optional value` from the description `Swift runtime failure: …` (or from the
    /// crashing thread's runtime-failure frame).
    public var runtimeFailure: String? {
        let prefix = "Swift runtime failure: "
        if description.hasPrefix(prefix) { return String(description.dropFirst(prefix.count)) }
        let crashed = threads.indices.contains(crashedThreadIndex) ? threads[crashedThreadIndex] : nil
        if let f = crashed?.frames.first(where: \.runtimeFailure), let s = f.symbol, s.hasPrefix(prefix) {
            return String(s.dropFirst(prefix.count))
        }
        return nil
    }

    /// `fatalError`, `precondition` and `assert` end in the stdlib's `_assertionFailure`; the log
    /// names that frame but not the message (the runtime printed it on stderr only).
    public var endedInAssertionFailure: Bool { assertionFailureIndex != nil }

    /// The first frame below `_assertionFailure` with a source location: where the program
    /// called `fatalError` (or `precondition`, `assert`).
    public var assertionFailureCaller: Frame? {
        guard let i = assertionFailureIndex else { return nil }
        return threads[crashedThreadIndex].frames[(i + 1)...].first { $0.sourceLocation != nil && !$0.system }
    }

    private var assertionFailureIndex: Int? {
        threads[crashedThreadIndex].frames.prefix(8).firstIndex { ($0.symbol ?? "").contains("_assertionFailure") }
    }
}
