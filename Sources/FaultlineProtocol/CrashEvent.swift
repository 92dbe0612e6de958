// Turns a crash report into a crash event in Sentry's native event schema.
import Foundation

public enum CrashEvent {
    /// Builds the event. `extraContexts` lets the SDK add what it knows at upload time (device, sdk).
    public static func make(from r: CrashReport, sdkName: String = "faultline.swift", sdkVersion: String = FaultlineVersion.string) -> JSONValue {
        let ctx = r.context
        var event: [String: JSONValue] = [
            "event_id": .string(r.eventID),
            "timestamp": .double(r.timestamp),
            "platform": "native",
            "level": "fatal",
            "logger": "faultline.crash",
            "sdk": ["name": .string(sdkName), "version": .string(sdkVersion)],
        ]
        for key in ["release", "environment", "server_name", "dist"] {
            if let v = ctx[key]?.stringValue, !v.isEmpty { event[key] = .string(v) }
        }
        var tags: [String: JSONValue] = ctx["tags"]?.objectValue ?? [:]
        if let service = ctx["service"]?.stringValue { tags["service"] = .string(service) }
        tags["signal"] = .string(r.signal.name)
        event["tags"] = .object(tags)

        var contexts: [String: JSONValue] = ctx["contexts"]?.objectValue ?? [:]
        contexts["os"] = contexts["os"] ?? ["name": "Linux", "type": "os"]
        var app: [String: JSONValue] = contexts["app"]?.objectValue ?? [:]
        app["app_name"] = app["app_name"] ?? .string((r.executable as NSString).lastPathComponent)
        if let appID = ctx["app_id"]?.stringValue { app["app_identifier"] = .string(appID) }
        contexts["app"] = .object(app)
        contexts["process"] = ["pid": .int(Int64(r.pid)), "executable": .string(r.executable), "type": "process"]
        if let trace = ctx["trace"], trace.objectValue != nil { contexts["trace"] = trace }
        // The span the crashing thread was in wins over the process-wide trace.
        if let t = r.threadTrace { contexts["trace"] = ["type": "trace", "trace_id": .string(t.traceID), "span_id": .string(t.spanID)] }
        if let tail = r.stderrTail {
            // A context, not an attachment: the event stays one self-contained JSON document that
            // `faultline symbolicate`, the server's renderer and Sentry's UI all show; 16 KiB is far
            // below the 1 MiB event limit.
            contexts["stderr"] = ["type": "stderr", "tail": .string(tail.text), "total_bytes": .int(Int64(tail.totalBytes)),
                                  "truncated": .bool(tail.totalBytes > tail.text.utf8.count)]
        }
        event["contexts"] = .object(contexts)
        if let session = ctx["session_id"]?.stringValue { tags["session_id"] = .string(session); event["tags"] = .object(tags) }
        if let install = ctx["install_id"]?.stringValue { event["user"] = ["id": .string(install)] }

        let stacktrace = stacktraceJSON(r)
        var mechanismMeta: [String: JSONValue] = [
            "signal": ["number": .int(Int64(r.signal.number)), "code": .int(Int64(r.signal.code)),
                       "name": .string(r.signal.name), "code_name": .string(r.signal.codeName)],
        ]
        if r.stackOverflow { mechanismMeta["faultline_stack_overflow"] = true }
        var value = "\(r.signal.name) / \(r.signal.codeName) at \(r.signal.faultAddress.hex)"
        if r.stackOverflow { value = "stack overflow: " + value }
        event["exception"] = ["values": [[
            "type": .string(r.signal.name),
            "value": .string(value),
            "thread_id": .int(Int64(r.threadID)),
            "mechanism": ["type": "signalhandler", "handled": false, "synthetic": true, "meta": .object(mechanismMeta)],
            "stacktrace": stacktrace,
        ]]]
        event["threads"] = ["values": [[
            "id": .int(Int64(r.threadID)), "name": .string(r.threadName), "crashed": true, "current": true,
        ]]]
        event["debug_meta"] = ["images": .array(r.modules.map(imageJSON))]
        event["breadcrumbs"] = ["values": .array(r.breadcrumbs)]
        var extra: [String: JSONValue] = ["unwind_stopped_by": .string(r.unwindStoppedBy)]
        if let o = r.omitted { extra["frames_omitted"] = ["after": .int(Int64(o.after)), "count": .int(Int64(o.count))] }
        event["extra"] = .object(extra)
        return .object(event)
    }

    /// Frames caller-first as Sentry wants; `instruction_addr_adjustment: all_but_first` tells a
    /// symbolicator that every frame except the crashing one is a return address.
    static func stacktraceJSON(_ r: CrashReport) -> JSONValue {
        var frames: [JSONValue] = []
        for (i, f) in r.frames.enumerated() {
            var frame: [String: JSONValue] = ["instruction_addr": .string(f.address.hex)]
            if let m = r.module(containing: f.address) {
                frame["package"] = .string(m.path)
                frame["image_addr"] = .string(m.base.hex)
                frame["in_app"] = .bool(isInApp(modulePath: m.path, executable: r.executable))
            }
            if let o = r.omitted, i == o.after {
                frames.append(["function": .string("<\(o.count) frames omitted>"), "instruction_addr": "0x0", "in_app": false])
            }
            frames.append(.object(frame))
        }
        var regs: [String: JSONValue] = [:]
        for (n, v) in r.registers { regs[n] = .string(v.hex) }
        return ["frames": .array(frames.reversed()), "registers": .object(regs), "instruction_addr_adjustment": "all_but_first"]
    }

    static func imageJSON(_ m: CrashReport.Module) -> JSONValue {
        var image: [String: JSONValue] = [
            "type": "elf", "code_file": .string(m.path), "image_addr": .string(m.base.hex),
            "image_size": .int(Int64(m.size)), "arch": "x86_64",
        ]
        if let b = m.buildID {
            image["code_id"] = .string(b.hex)
            image["debug_id"] = .string(b.debugID.description)
        }
        return .object(image)
    }

    /// System libraries and the runtime are not the app's code; grouping keys on in-app frames.
    public static func isInApp(modulePath: String, executable: String) -> Bool {
        if modulePath == executable { return true }
        let systemPrefixes = ["/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/opt/swift/", "/usr/libexec/", "[vdso]"]
        if systemPrefixes.contains(where: { modulePath.hasPrefix($0) }) { return false }
        let name = (modulePath as NSString).lastPathComponent
        if name.hasPrefix("libswift") || name.hasPrefix("libFoundation") || name.hasPrefix("libdispatch") || name.hasPrefix("libc.so") { return false }
        return true
    }
}

public enum FaultlineVersion {
    public static let string = "0.1.0"
}
