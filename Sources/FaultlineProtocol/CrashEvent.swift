// Turns a crash report into a crash event in Sentry's native event schema.
import FoundationEssentials

public enum CrashEvent {
    /// Bytes of the event the threads other than the crashing one may take. Servers refuse an
    /// event over 1 MiB (Sentry's and Faultline's limit), and a process with a thousand parked
    /// threads, or a few hundred deep stacks, is several: past this share the remaining threads
    /// are counted in `extra.threads_omitted`, not listed, and the crash itself still arrives.
    public static let otherThreadsBudget = 512 * 1024

    /// Builds the event. `extraContexts` lets the SDK add what it knows at upload time (device, sdk).
    public static func make(from r: CrashReport, sdkName: String = "faultline.swift", sdkVersion: String = FaultlineVersion.string) -> JSONValue {
        let ctx = r.crashContext
        var skeleton = EventSkeleton(eventID: r.eventID, timestamp: r.timestamp, level: "fatal", sdkName: sdkName, sdkVersion: sdkVersion)
        skeleton.logger = "faultline.crash"
        skeleton.release = ctx.release
        skeleton.environment = ctx.environment
        skeleton.serverName = ctx.serverName
        skeleton.dist = ctx.dist
        skeleton.installID = ctx.installID
        var event = skeleton.fields
        var tags = ctx.tags
        if let service = ctx.service { tags["service"] = .string(service) }
        tags["signal"] = .string(r.signal.name)
        event["tags"] = .object(tags)

        // The crash core records the architecture it was built for; older reports carried the
        // SDK's in their context, and before that all were x86_64.
        let arch = r.recordedArchitecture?.sentryName ?? ctx.architecture ?? r.architecture.sentryName
        var contexts = ctx.allContexts
        var device = contexts["device"]?.objectValue ?? ["type": "device"]
        device["arch"] = .string(arch)
        contexts["device"] = .object(device)
        contexts["os"] = contexts["os"] ?? ["name": "Linux", "type": "os"]
        var app: JSONObject = contexts["app"]?.objectValue ?? [:]
        app["app_name"] = app["app_name"] ?? .string(PathName.last(r.executable))
        if let appID = ctx.appID { app["app_identifier"] = .string(appID) }
        contexts["app"] = .object(app)
        contexts["process"] = ["pid": .int(Int64(r.pid)), "executable": .string(r.executable), "type": "process"]
        if let trace = ctx.trace { contexts["trace"] = trace.json }
        // The span the crashing thread was in wins over the process-wide trace.
        if let t = r.threadTrace { contexts["trace"] = ["type": "trace", "trace_id": .string(t.traceID), "span_id": .string(t.spanID)] }
        if let tail = r.stderrTail {
            // A context, not an attachment: the event stays one self-contained JSON document that
            // `faultline symbolicate`, the server's renderer and Sentry's UI all show; 16 KiB is far
            // below the 1 MiB event limit.
            contexts["stderr"] = [
                "type": "stderr", "tail": .string(tail.text), "total_bytes": .int(Int64(tail.totalBytes)),
                "truncated": .bool(tail.totalBytes > tail.text.utf8.count)
            ]
        }
        event["contexts"] = .object(contexts)
        if let session = r.session?.id { tags["session_id"] = .string(session); event["tags"] = .object(tags) }

        let stacktrace = stacktraceJSON(r)
        var mechanismMeta: [String: JSONValue] = [
            "signal": [
                "number": .int(Int64(r.signal.number)), "code": .int(Int64(r.signal.code)),
                "name": .string(r.signal.name), "code_name": .string(r.signal.codeName)
            ]
        ]
        if r.stackOverflow { mechanismMeta["faultline_stack_overflow"] = true }
        var type = r.signal.name
        // A signal a process sent (code <= 0) has no fault address (reports before that was
        // written as 0 held the sender's pid there): it names its sender instead.
        var value =
            r.signal.code > 0
            ? "\(r.signal.name) / \(r.signal.codeName) at \(r.signal.faultAddress.hex)"
            : "\(r.signal.name) / \(r.signal.codeName) from pid \(r.signal.senderPID)"
        if r.stackOverflow { value = "stack overflow: " + value }
        var mechanism: [String: JSONValue] = ["type": "signalhandler", "handled": false, "meta": .object(mechanismMeta)]
        if let message = r.message {
            // The runtime said why: that is the exception; the signal stays in the mechanism.
            let why = message.interpretation
            type = why.type
            value = why.value
            var data: [String: JSONValue] = ["message_source": .string(message.source), "message": .string(message.text)]
            if let f = why.file { data["file"] = .string(f) }
            if let l = why.line { data["line"] = .int(Int64(l)) }
            if let f = why.function { data["function"] = .string(f) }
            mechanism["data"] = .object(data)
        } else {
            mechanism["synthetic"] = true  // the type is only the signal's name
        }
        event["exception"] = [
            "values": [
                [
                    "type": .string(type),
                    "value": .string(value),
                    "thread_id": .int(Int64(r.threadID)),
                    "mechanism": .object(mechanism),
                    "stacktrace": stacktrace
                ]
            ]
        ]
        // Sentry's threads interface: the crashing thread first (its stack is the exception's),
        // then every other thread with its own stack and registers.
        var threads: [JSONValue] = [
            [
                "id": .int(Int64(r.threadID)), "name": .string(r.threadName), "crashed": true, "current": true
            ]
        ]
        var otherThreadBytes = 0
        var threadsOmitted = r.threadsOmitted
        for (i, t) in r.otherThreads.enumerated() {
            var thread: [String: JSONValue] = [
                "id": .int(Int64(t.id)), "name": .string(t.name), "crashed": false, "current": false,
                "state": .string(t.state)
            ]
            if t.frames.isEmpty {
                if let e = t.error { thread["faultline_error"] = .string(e) }
            } else {
                thread["stacktrace"] = stacktraceJSON(frames: t.frames, registers: t.registers, omitted: nil, report: r)
            }
            let listed = JSONValue.object(thread)
            otherThreadBytes += listed.serialized().count
            guard otherThreadBytes <= otherThreadsBudget else {
                threadsOmitted += r.otherThreads.count - i
                break
            }
            threads.append(listed)
        }
        event["threads"] = ["values": .array(threads)]
        event["debug_meta"] = ["images": .array(r.modules.map { imageJSON($0, arch: arch) })]
        event["breadcrumbs"] = ["values": .array(r.breadcrumbs)]
        var extra: [String: JSONValue] = ["unwind_stopped_by": .string(r.unwindStoppedBy)]
        if let why = r.unwindFallback { extra["unwind_fallback"] = .string(why) }
        if let o = r.omitted { extra["frames_omitted"] = ["after": .int(Int64(o.after)), "count": .int(Int64(o.count))] }
        if threadsOmitted > 0 { extra["threads_omitted"] = .int(Int64(threadsOmitted)) }
        if r.modulesOmitted > 0 { extra["modules_omitted"] = .int(Int64(r.modulesOmitted)) }
        if r.asyncAfter != nil {
            extra["async_unwind_stopped_by"] = .string(r.asyncStoppedBy ?? "unknown")
            extra["async_frames"] = .int(Int64(r.asyncFrames.count))
        }
        event["extra"] = .object(extra)
        return .object(event)
    }

    /// Frames caller-first as Sentry wants; `instruction_addr_adjustment: all_but_first` tells a
    /// symbolicator that every frame except the crashing one is a return address.
    ///
    /// A Swift async crash reads as its logical stack: the physical frames down to the innermost
    /// async function, then its async callers (`async_frames`, each marked `data.faultline_async`
    /// and `trust: "async"`; their address is a resume function, exact, so symbolicators must not
    /// step back into the call instruction), then the executor's physical frames below.
    static func stacktraceJSON(_ r: CrashReport) -> JSONValue {
        stacktraceJSON(
            frames: r.frames, registers: r.registers, omitted: r.omitted, report: r,
            async: r.asyncAfter.map { (after: $0, addresses: r.asyncFrames) })
    }

    static func stacktraceJSON(
        frames addresses: [FrameAddress], registers: [(name: String, value: Address)],
        omitted: CrashReport.OmittedFrames?, report r: CrashReport,
        async: (after: Int, addresses: [Address])? = nil
    ) -> JSONValue {
        var frames: [JSONValue] = []
        func frameJSON(_ a: Address) -> JSONObject {
            var frame: JSONObject = ["instruction_addr": .string(a.hex)]
            if let m = r.module(containing: a) {
                frame["package"] = .string(m.path)
                frame["image_addr"] = .string(m.base.hex)
                frame["in_app"] = .bool(isInApp(modulePath: m.path, executable: r.executable))
                if FaultlineOwnFrames.isOwn(modulePath: m.path) { FaultlineOwnFrames.mark(&frame) }
            }
            if r.faultlineAddresses.contains(a) { FaultlineOwnFrames.mark(&frame) }
            return frame
        }
        for (i, f) in addresses.enumerated() {
            if let o = omitted, i == o.after {
                frames.append(["function": .string("<\(o.count) frames omitted>"), "instruction_addr": "0x0", "in_app": false])
            }
            var frame = frameJSON(f.address)
            // An interrupted instruction above a signal frame: exact, like the crashing frame's.
            if i > 0 && !f.isReturnAddress { SentryStackTrace.markProgramCounter(&frame) }
            frames.append(.object(frame))
            if let async, i == min(async.after, addresses.count - 1) {
                for a in async.addresses {
                    var frame = frameJSON(a)
                    frame["trust"] = "async"
                    frame["data"] = ["faultline_async": true]
                    frames.append(.object(frame))
                }
            }
        }
        var regs: [String: JSONValue] = [:]
        for (n, v) in registers { regs[n] = .string(v.hex) }
        return ["frames": .array(frames.reversed()), "registers": .object(regs), "instruction_addr_adjustment": "all_but_first"]
    }

    static func imageJSON(_ m: CrashReport.Module, arch: String) -> JSONValue {
        DebugImage(codeFile: m.path, base: m.base, size: m.size, buildID: m.buildID, arch: arch).json
    }

    /// System libraries and the runtime are not the app's code; grouping keys on in-app frames.
    public static func isInApp(modulePath: String, executable: String) -> Bool {
        if modulePath == executable { return true }
        let systemPrefixes = ["/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/opt/swift/", "/usr/libexec/", "[vdso]"]
        if systemPrefixes.contains(where: { modulePath.hasPrefix($0) }) { return false }
        let name = PathName.last(modulePath)
        if name.hasPrefix("libswift") || name.hasPrefix("libFoundation") || name.hasPrefix("libdispatch") || name.hasPrefix("libc.so") { return false }
        return true
    }
}

extension CrashEvent {
    /// A Swift async partial function read as the function it belongs to: "(1) suspend resume
    /// partial function for closure #2 in main" → "closure #2 in main" (also "await resume", and
    /// "async function pointer to"). Other names are returned unchanged.
    public static func readableFunctionName(_ name: String) -> String {
        var s = Substring(name)
        if s.hasPrefix("("), let close = s.firstIndex(of: ")"), s[s.index(after: s.startIndex)..<close].allSatisfy(\.isNumber) {
            s = s[s.index(after: close)...].drop(while: { $0 == " " })
        }
        for prefix in ["suspend resume partial function for ", "await resume partial function for ", "async function pointer to "]
        where s.hasPrefix(prefix) {
            return String(s.dropFirst(prefix.count))
        }
        return name
    }
}
