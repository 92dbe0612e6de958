// The crash report the C handler writes (format documented in docs/CRASH-REPORT.md).
import Foundation

public struct CrashReport: Sendable, Equatable {
    public static let formatName = "faultline-crash"
    public static let supportedVersion = 1

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
    public var eventID: String
    public var timestamp: Double
    public var pid: Int
    public var executable: String
    public var threadID: Int
    public var threadName: String
    public var signal: Signal
    public var stackOverflow: Bool
    public var registers: [(name: String, value: Address)]
    /// Innermost first. Frame 0 is the faulting instruction; every other frame is a return address.
    public var frames: [FrameAddress]
    public var omitted: OmittedFrames?
    public var unwindStoppedBy: String
    public var modules: [Module]
    public var breadcrumbs: [JSONValue]
    public var context: JSONValue
    /// The end of what the process wrote to stderr, when stderr capture was on.
    public var stderrTail: StderrTail?
    /// The crashing thread's span when it crashed (`trace`: trace_id, span_id), nil outside one.
    public var threadTrace: (traceID: String, spanID: String)?

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
        public var description: String {
            switch self {
            case .notJSON(let r): return "crash report is not valid JSON (\(r))"
            case .truncated: return "crash report is truncated (no end marker)"
            case .wrongFormat(let f): return "not a Faultline crash report (format \(f))"
            case .unsupportedVersion(let v): return "crash report version \(v) is newer than this reader (\(CrashReport.supportedVersion))"
            case .missingField(let f): return "crash report lacks \(f)"
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
        signal = Signal(number: Int(num), name: s["name"]?.stringValue ?? "SIG\(num)",
                        code: Int(s["code"]?.int64Value ?? 0), codeName: s["code_name"]?.stringValue ?? "",
                        faultAddress: Address(string: s["fault_address"]?.stringValue ?? "0") ?? Address(0),
                        senderPID: Int(s["sender_pid"]?.int64Value ?? 0))
        stackOverflow = j["stack_overflow"]?.boolValue ?? false
        var regs: [(String, Address)] = []
        if let r = j["registers"]?.objectValue {
            for name in CrashReport.registerOrder { if let v = r[name]?.stringValue, let a = Address(string: v) { regs.append((name, a)) } }
        }
        registers = regs
        guard let fr = j["frames"]?.arrayValue else { throw .missingField("frames") }
        frames = fr.compactMap { f in
            guard let a = f["address"]?.stringValue.flatMap(Address.init(string:)) else { return nil }
            return f["kind"]?.stringValue == "pc" ? .programCounter(a) : .returnAddress(a)
        }
        if let o = j["frames_omitted"], let after = o["after"]?.int64Value, let count = o["count"]?.int64Value {
            omitted = OmittedFrames(after: Int(after), count: Int(count))
        }
        unwindStoppedBy = j["unwind"]?["stopped_by"]?.stringValue ?? "unknown"
        modules = (j["modules"]?.arrayValue ?? []).compactMap { m in
            guard let path = m["path"]?.stringValue, let base = m["base"]?.stringValue.flatMap(Address.init(string:)) else { return nil }
            // A negative size (a corrupt report) is clamped to 0, never trapped on.
            return Module(path: path, base: base, size: UInt64(clamping: m["size"]?.int64Value ?? 0),
                          buildID: m["build_id"]?.stringValue.flatMap(BuildID.init(hex:)))
        }
        breadcrumbs = j["breadcrumbs"]?.arrayValue ?? []
        context = j["context"] ?? .object([:])
        if let t = j["trace"], let tid = t["trace_id"]?.stringValue, let sid = t["span_id"]?.stringValue,
           tid.utf8.count == 32, sid.utf8.count == 16 {
            threadTrace = (tid, sid)
        }
        if let t = j["stderr_tail"], let text = t["text"]?.stringValue {
            stderrTail = StderrTail(text: text, capacity: Int(t["capacity"]?.int64Value ?? 0), totalBytes: Int(t["total_bytes"]?.int64Value ?? 0))
        }
    }

    public func module(containing a: Address) -> Module? { modules.first { $0.contains(a) } }

    /// x86_64 general registers in the order debuggers print them.
    public static let registerOrder = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
                                       "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags"]
}
