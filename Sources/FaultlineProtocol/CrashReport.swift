// The crash report the C handler writes (format documented in docs/CRASH-REPORT.md).
import FoundationEssentials

public struct CrashReport: Sendable, Equatable {
    public static let formatName = "faultline-crash"
    /// Version 2 added `threads` (every thread) and `message`, then the optional `async_frames`;
    /// version 1 reports are still read.
    public static let supportedVersion = 2

    public struct Signal: Sendable, Equatable {
        public var number: Int
        public var name: String
        public var code: Int
        public var codeName: String
        public var faultAddress: Address
        public var senderPID: Int
    }
    public struct Module: Sendable, Equatable {
        public var path: String
        /// Lowest mapped address of the module (where its ELF header is): Sentry's `image_addr`.
        public var base: Address
        public var size: UInt64
        public var buildID: BuildID?
        public func contains(_ a: Address) -> Bool { a.value >= base.value && a.value - base.value < size }
    }
    public struct OmittedFrames: Sendable, Equatable {
        /// Index in `frames` of the first frame after the gap.
        public var after: Int
        public var count: Int
    }

    public var version: Int
    /// The report's `arch`, nil in reports written before the crash core recorded it.
    public var recordedArchitecture: CPUArchitecture?
    /// The crashed process's architecture (reports without `arch` came from x86_64).
    public var architecture: CPUArchitecture { recordedArchitecture ?? CPUArchitecture.ofReportsWithoutArch }
    public var eventID: String
    public var timestamp: Double
    public var pid: Int
    public var executable: String
    public var threadID: Int
    public var threadName: String
    public var signal: Signal
    /// Why it crashed, when the runtime said so (Swift fatal error, C++ exception, glibc assert).
    public var message: CrashMessage?
    public var stackOverflow: Bool
    public var registers: [(name: String, value: Address)]
    /// Innermost first. Frame 0 is the faulting instruction; every other frame is a return address.
    public var frames: [FrameAddress]
    public var omitted: OmittedFrames?
    /// The Swift async chain of the crashing thread (report field `async_frames`), innermost
    /// first: each address is a resume function (an exact code address, not a return address)
    /// where a logical caller continues. Empty when the crash was not in async code.
    public var asyncFrames: [Address] = []
    /// Index in `frames` of the physical frame whose async context began the chain.
    public var asyncAfter: Int?
    /// Why the async walk ended ("end", "limit", "unreadable context", "loop", …).
    public var asyncStoppedBy: String?
    public var unwindStoppedBy: String
    /// How the crashing thread was walked (report field `unwind.method`): "libunwind" or
    /// "frame-pointers"; "libunwind" in reports that predate the field.
    public var unwindMethod = "libunwind"
    /// Why the crashing thread was walked by frame pointers instead of libunwind (report field
    /// `unwind.fallback`: a crash inside the unwinder's own preparation, …); nil when it was not.
    public var unwindFallback: String?
    /// Frames (of any thread) the crash core marked as its own code (report field
    /// `faultline: true`): never the app's, whatever module they are linked into.
    public var faultlineAddresses: Set<Address> = []
    public var modules: [Module]
    public var breadcrumbs: [JSONValue]
    public var context: JSONValue
    /// `context` read as the SDK wrote it.
    public var crashContext: CrashContext { CrashContext(json: context) }
    /// The session the crash ends; nil when the process had none.
    public var session: CrashSession?
    /// Every other thread at the moment of the crash (report field `threads`, crashing thread
    /// excluded: it is the report's own thread and frames). Empty in reports without the field.
    public var otherThreads: [ThreadSnapshot] = []
    /// Threads beyond the report's cap that were counted but not listed.
    public var threadsOmitted = 0
    /// Modules a full module table left out (the crashing thread's frames' modules are kept).
    public var modulesOmitted = 0

    public struct ThreadSnapshot: Sendable, Equatable {
        public var id: Int
        public var name: String
        /// The kernel's run state ("running", "sleeping", …) as the crash found it.
        public var state: String
        /// Innermost first: frame 0 is where the thread was interrupted (exact pc), the rest return addresses.
        public var frames: [FrameAddress]
        public var registers: [(name: String, value: Address)]
        /// Why there are no frames, when there are none ("blocks signals …", "no answer …").
        public var error: String?
        public static func == (l: ThreadSnapshot, r: ThreadSnapshot) -> Bool { l.id == r.id && l.frames == r.frames && l.error == r.error }
    }

    /// The end of what the process wrote to stderr, when stderr capture was on.
    public var stderrTail: StderrTail?
    /// The crashing thread's span when it crashed (`trace`: trace_id, span_id), nil outside one.
    public var threadTrace: ThreadTrace?
    public struct ThreadTrace: Sendable, Equatable {
        public var traceID: String
        public var spanID: String
    }

    public struct StderrTail: Sendable, Equatable {
        public var text: String
        /// The ring's size: at most this many bytes (plus what was still in the pipe) are kept.
        public var capacity: Int
        /// Bytes written to stderr since capture began; more than `text` holds means it was cut.
        public var totalBytes: Int
    }

    public static func == (l: CrashReport, r: CrashReport) -> Bool { l.eventID == r.eventID && l.frames == r.frames }

    public enum ParseError: Error, CustomStringConvertible {
        case notJSON(String)
        case truncated
        case wrongFormat(String)
        case unsupportedVersion(Int)
        case missingField(String)
        case unsupportedArchitecture(String)
        public var description: String {
            switch self {
            case .notJSON(let r): return "crash report is not valid JSON (\(r))"
            case .truncated: return "crash report is truncated (no end marker)"
            case .wrongFormat(let f): return "not a Faultline crash report (format \(f))"
            case .unsupportedVersion(let v): return "crash report version \(v) is newer than this reader (\(CrashReport.supportedVersion))"
            case .missingField(let f): return "crash report lacks \(f)"
            case .unsupportedArchitecture(let a):
                return
                    "crash report from an architecture this reader does not know (\(a)); \(CPUArchitecture.allCases.map(\.rawValue).joined(separator: " and ")) are read"
            }
        }
    }

    public static func parse(_ data: Data) throws(ParseError) -> CrashReport {
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw .notJSON(error.reason) }
        return try CrashReport(json: json)
    }

    public init(json j: JSONValue) throws(ParseError) {
        guard let format = j["format"]?.stringValue else { throw .wrongFormat("none") }
        guard format == CrashReport.formatName else { throw .wrongFormat(format) }
        guard j["end"]?.boolValue == true else { throw .truncated }
        guard let v = j["version"]?.int64Value else { throw .missingField("version") }
        guard v <= CrashReport.supportedVersion else { throw .unsupportedVersion(Int(v)) }
        version = Int(v)
        var recorded: CPUArchitecture?
        if let name = j["arch"]?.stringValue {
            guard let known = CPUArchitecture(name: name) else { throw .unsupportedArchitecture(name) }
            recorded = known
        }
        recordedArchitecture = recorded
        let architecture = recorded ?? CPUArchitecture.ofReportsWithoutArch
        guard let id = j["event_id"]?.stringValue else { throw .missingField("event_id") }
        eventID = id
        let sec = j["timestamp"]?["sec"]?.doubleValue ?? 0
        let nsec = j["timestamp"]?["nsec"]?.doubleValue ?? 0
        timestamp = sec + nsec / 1e9
        pid = Int(j["process"]?["pid"]?.int64Value ?? 0)
        executable = j["process"]?["executable"]?.stringValue ?? ""
        threadID = Int(j["thread"]?["tid"]?.int64Value ?? 0)
        threadName = j["thread"]?["name"]?.stringValue ?? ""
        guard let s = j["signal"], let num = s["number"]?.int64Value else { throw .missingField("signal.number") }
        signal = Signal(
            number: Int(num), name: s["name"]?.stringValue ?? "SIG\(num)",
            code: Int(s["code"]?.int64Value ?? 0), codeName: s["code_name"]?.stringValue ?? "",
            faultAddress: Address(string: s["fault_address"]?.stringValue ?? "0") ?? Address(0),
            senderPID: Int(s["sender_pid"]?.int64Value ?? 0))
        if let m = j["message"], let text = m["text"]?.stringValue {
            message = CrashMessage(source: m["source"]?.stringValue ?? "", type: m["type"]?.stringValue ?? "", text: text)
        }
        stackOverflow = j["stack_overflow"]?.boolValue ?? false
        registers = Self.registers(j["registers"], architecture)
        guard j["frames"]?.arrayValue != nil else { throw .missingField("frames") }
        frames = Self.frames(j["frames"])
        if let o = j["frames_omitted"], let after = o["after"]?.int64Value, let count = o["count"]?.int64Value {
            omitted = OmittedFrames(after: Int(after), count: Int(count))
        }
        unwindStoppedBy = j["unwind"]?["stopped_by"]?.stringValue ?? "unknown"
        unwindFallback = j["unwind"]?["fallback"]?.stringValue
        unwindMethod = j["unwind"]?["method"]?.stringValue ?? "libunwind"
        for list in [j["frames"]] + (j["threads"]?.arrayValue ?? []).map({ $0["frames"] }) {
            for f in list?.arrayValue ?? [] where f["faultline"]?.boolValue == true {
                if let a = f["address"]?.stringValue.flatMap(Address.init(string:)) { faultlineAddresses.insert(a) }
            }
        }
        if let a = j["async_unwind"], let after = a["after"]?.int64Value, after >= 0 {
            asyncAfter = Int(clamping: after)
            asyncStoppedBy = a["stopped_by"]?.stringValue
            asyncFrames = (j["async_frames"]?.arrayValue ?? []).compactMap { $0["address"]?.stringValue.flatMap(Address.init(string:)) }
        }
        modules = (j["modules"]?.arrayValue ?? []).compactMap { m in
            guard let path = m["path"]?.stringValue, let base = m["base"]?.stringValue.flatMap(Address.init(string:)) else { return nil }
            // A negative size (a corrupt report) is clamped to 0, never trapped on.
            return Module(
                path: path, base: base, size: UInt64(clamping: m["size"]?.int64Value ?? 0),
                buildID: m["build_id"]?.stringValue.flatMap(BuildID.init(hex:)))
        }
        // The SDK's binary records come as hex (the crash handler does not render JSON); a damaged
        // one loses that breadcrumb only.
        breadcrumbs = (j["breadcrumbs"]?.arrayValue ?? []).compactMap(BreadcrumbRecord.fromReport)
        context = j["context"] ?? .object([:])
        session = CrashSession(report: j, context: CrashContext(json: context))
        if let t = j["trace"], let tid = t["trace_id"]?.stringValue, let sid = t["span_id"]?.stringValue,
            tid.utf8.count == 32, sid.utf8.count == 16
        {
            threadTrace = ThreadTrace(traceID: tid, spanID: sid)
        }
        for t in j["threads"]?.arrayValue ?? [] where t["crashed"]?.boolValue != true {
            guard let id = t["tid"]?.int64Value else { continue }
            otherThreads.append(
                ThreadSnapshot(
                    id: Int(id), name: t["name"]?.stringValue ?? "", state: t["state"]?.stringValue ?? "unknown",
                    frames: Self.frames(t["frames"]), registers: Self.registers(t["registers"], architecture), error: t["error"]?.stringValue))
        }
        threadsOmitted = Int(clamping: j["threads_omitted"]?.int64Value ?? 0)
        modulesOmitted = Int(clamping: max(0, j["modules_omitted"]?.int64Value ?? 0))
        if let t = j["stderr_tail"], let text = t["text"]?.stringValue {
            stderrTail = StderrTail(text: text, capacity: Int(t["capacity"]?.int64Value ?? 0), totalBytes: Int(t["total_bytes"]?.int64Value ?? 0))
        }
    }

    public func module(containing a: Address) -> Module? { modules.first { $0.contains(a) } }

    static func registers(_ json: JSONValue?, _ architecture: CPUArchitecture) -> [(name: String, value: Address)] {
        guard let r = json?.objectValue else { return [] }
        return architecture.registerNames.compactMap { name in r[name]?.stringValue.flatMap(Address.init(string:)).map { (name, $0) } }
    }

    static func frames(_ json: JSONValue?) -> [FrameAddress] {
        (json?.arrayValue ?? []).compactMap { f in
            guard let a = f["address"]?.stringValue.flatMap(Address.init(string:)) else { return nil }
            return f["kind"]?.stringValue == "pc" ? .programCounter(a) : .returnAddress(a)
        }
    }

}
