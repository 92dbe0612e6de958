// Readable, debugger-style text for a symbolicated event, and reading report-or-event input.
import FoundationEssentials
import Glibc
import FaultlineProtocol

public enum SymbolicationInputError: Error, CustomStringConvertible {
    case notJSON(String)
    case notACrash(String)
    case badReport(String)

    public var description: String {
        switch self {
        case .notJSON(let why): return "input is not JSON (\(why))"
        case .notACrash(let why): return "input is neither a Faultline crash report nor a Sentry event, nor a Swift crash log (\(why))"
        case .badReport(let why): return why
        }
    }
}

public enum BacktraceText {
    /// Turns a crash report (`format: faultline-crash`), a Swift backtracer JSON crash log
    /// (`kind: crashReport`) or a Sentry event into an event.
    public static func event(from data: Data) throws(SymbolicationInputError) -> JSONValue {
        var json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw .notJSON(error.reason) }
        guard json.objectValue != nil else { throw .notACrash("top level is not an object") }
        // A Sentry event's containers in any form SDKs send them (a bare list, one object).
        if json["format"] == nil, !SwiftBacktraceLog.isCandidate(json), let normal = SentryValues.normalised(json) { json = normal }
        if json["format"] != nil {
            do { return CrashEvent.make(from: try CrashReport(json: json)) } catch { throw .badReport(error.description) }
        }
        if SwiftBacktraceLog.isCandidate(json) {
            do { return SwiftBacktraceEvent.make(from: try SwiftBacktraceLog(json: json), eventID: SwiftBacktraceEvent.eventID(for: data)) } catch {
                throw .badReport(error.description)
            }
        }
        // An event must hold a stack to show: any other JSON printing nothing and exiting 0
        // would look like success.
        guard hasFrames(json) else { throw .notACrash("no exception or thread with stack frames") }
        return json
    }

    static func hasFrames(_ event: JSONValue) -> Bool {
        for key in ["exception", "threads"] {
            for v in event[key]?["values"]?.arrayValue ?? [] where !(v["stacktrace"]?["frames"]?.arrayValue ?? []).isEmpty { return true }
        }
        return false
    }

    /// A backtrace per stack trace, innermost frame first, like a debugger prints it:
    /// `#3  0x00005555555551a9 in outer at /src/crash.c:20:3 (crasher +0x11a9)`.
    /// Each stack is read into the model (`SymbolicatedStack`) and formatted: frames whose role is
    /// Faultline's (the thread-start wrapper, the handler) are left out unless
    /// `showFaultlineFrames`; Swift async callers carry an `[async]` mark.
    public static func render(event: JSONValue, crashedOnly: Bool = false, showFaultlineFrames: Bool = false) -> String {
        var out = ""
        for (i, ex) in (event["exception"]?["values"]?.arrayValue ?? []).enumerated() {
            let type = ex["type"]?.stringValue ?? "crash"
            let value = ex["value"]?.stringValue ?? ""
            out += (i == 0 ? "" : "\n") + "\(type): \(value)"
            if let tid = ex["thread_id"]?.int64Value { out += " (thread \(tid))" }
            out += "\n"
            // A crash message (Swift fatal error, C++ exception, assert) names where the runtime
            // said it failed, and the signal it ended with.
            let data = ex["mechanism"]?["data"]
            if let file = data?["file"]?.stringValue {
                let line = data?["line"]?.int64Value.map { ":\($0)" } ?? ""
                let function = data?["function"]?.stringValue.map { " in \($0)" } ?? ""
                out += "  reported at \(file)\(line)\(function)\n"
            }
            if data?["message_source"] != nil, let signal = ex["mechanism"]?["meta"]?["signal"]?["name"]?.stringValue {
                out += "  ended by \(signal)\n"
            }
            if let st = ex["stacktrace"] { out += render(stacktrace: st, showFaultlineFrames: showFaultlineFrames) }
        }
        // The other threads after the crashing one, whose stack is the exception's when it has one.
        let exceptionHasStack = (event["exception"]?["values"]?.arrayValue ?? []).contains { $0["stacktrace"] != nil }
        let threads = event["threads"]?["values"]?.arrayValue ?? []
        for th in threads
        where crashedOnly
            ? (th["crashed"]?.boolValue == true && !exceptionHasStack)
            : !(th["crashed"]?.boolValue == true && exceptionHasStack)
        {
            let state = th["state"]?.stringValue.map { " (\($0))" } ?? ""
            out += "\nThread \(th["id"]?.int64Value ?? 0) \(th["name"]?.stringValue ?? "")\(state):\n"
            if let st = th["stacktrace"] {
                out += render(stacktrace: st, showFaultlineFrames: showFaultlineFrames)
            } else if let why = th["faultline_error"]?.stringValue {
                out += "    no stack: \(why)\n"
            }
        }
        if let tail = event["contexts"]?["stderr"]?["tail"]?.stringValue {
            let cut = event["contexts"]?["stderr"]?["truncated"]?.boolValue == true
            out += "\nstderr (\(cut ? "last " : "")\(tail.utf8.count) bytes before the crash):\n" + tail
            if !tail.hasSuffix("\n") { out += "\n" }
        }
        return out
    }

    static func render(stacktrace: JSONValue, showFaultlineFrames: Bool = false) -> String {
        render(SymbolicatedStack(symbolicatedStacktrace: stacktrace), showFaultlineFrames: showFaultlineFrames)
    }

    /// One line per call, innermost first, numbered as shown.
    static func render(_ stack: SymbolicatedStack, showFaultlineFrames: Bool) -> String {
        var out = ""
        var n = 0
        var hidden = 0
        for f in stack.frames {
            if !showFaultlineFrames && f.role == .faultline { hidden += 1; continue }
            let addr = f.instructionAddress ?? 0
            // "#7  0x…", "#42 0x…": a column of four, and at least one space after a wider number.
            let number = "#\(n)"
            var line = number + String(repeating: " ", count: max(1, 4 - number.count))
            if f.isAsync { line += "[async] " }
            line += "0x" + String(addr, radix: 16).zeroPadded(toLength: 16)
            line += " in " + (f.function ?? "??")
            if let file = f.file {
                line += " at \(file)"
                if let l = f.line { line += ":\(l)" }
                if let c = f.column { line += ":\(c)" }
            }
            if f.isInferred { line += " [inferred]" }
            if f.isInlined { line += " [inlined]" }
            if let module = f.module {
                let name = PathName.last(module)
                line += f.moduleOffset.map { " (\(name) +0x\(String($0, radix: 16)))" } ?? " (\(name))"
            }
            if let reason = f.outcome.unresolvedReason { line += " [\(reason.message)]" }
            if f.isSymbolTableOnly { line += " [symbol table only]" }
            // How a minidump's walk found the frame (context, cfi, fp, scan): a scanned one may be
            // a stale return address.
            if let trust = f.trust { line += " [\(trust)]" }
            out += line + "\n"
            n += 1
        }
        if hidden > 0 { out += "    (\(hidden) Faultline frame\(hidden == 1 ? "" : "s") hidden; --faultline-frames shows them)\n" }
        return out
    }
}
