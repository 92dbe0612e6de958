// Turns a Swift backtracer crash log into a crash event in Sentry's native schema, the same shape
// `CrashEvent` gives Faultline's own reports, so the server groups and symbolicates it alike.
import FoundationEssentials

public enum SwiftBacktraceEvent {
    /// Builds the event. `eventID` should be `eventID(for:)` of the log's bytes, so converting the
    /// same log twice (a pickup interrupted before the log was removed) dedups on the server.
    /// `context` is what the crash report's would have been (release, environment, service, app
    /// id, install, tags, contexts); the SDK passes what it knows at pickup.
    public static func make(
        from log: SwiftBacktraceLog, eventID: String, context ctx: CrashContext = CrashContext(),
        sdkName: String = "faultline.swift", sdkVersion: String = FaultlineVersion.string
    ) -> JSONValue {
        let executable = executablePath(log)
        var skeleton = EventSkeleton(
            eventID: eventID, timestamp: log.timestamp > 0 ? log.timestamp : Date().timeIntervalSince1970, level: "fatal", sdkName: sdkName,
            sdkVersion: sdkVersion)
        skeleton.logger = "faultline.swift-backtrace"
        skeleton.release = ctx.release
        skeleton.environment = ctx.environment
        skeleton.serverName = ctx.serverName
        skeleton.dist = ctx.dist
        skeleton.installID = ctx.installID
        var event = skeleton.fields
        var tags = ctx.tags
        if let service = ctx.service { tags["service"] = .string(service) }
        if let signal = log.signal { tags["signal"] = .string(signal.name) }
        tags["crash_log"] = "swift-backtrace"
        event["tags"] = .object(tags)

        var contexts = ctx.allContexts
        contexts["os"] = contexts["os"] ?? ["name": "Linux", "type": "os", "raw_description": .string(log.platform)]
        var app: JSONObject = contexts["app"]?.objectValue ?? [:]
        app["app_name"] = app["app_name"] ?? .string(executable.map(PathName.last) ?? log.threads.first?.name ?? "")
        if let appID = ctx.appID { app["app_identifier"] = .string(appID) }
        contexts["app"] = .object(app)
        if let executable { contexts["process"] = ["executable": .string(executable), "type": "process"] }
        contexts["device"] = contexts["device"] ?? ["type": "device", "arch": .string(log.architecture)]
        event["contexts"] = .object(contexts)

        let crashed = log.crashedThreadIndex
        event["exception"] = ["values": [exceptionJSON(log, stacktrace: stacktraceJSON(log.threads[crashed], log: log, executable: executable))]]
        // The crashing thread's stack is the exception's (Sentry's rule: not in both places).
        event["threads"] = [
            "values": .array(
                log.threads.enumerated().map { i, t in
                    var thread: [String: JSONValue] = ["id": .int(Int64(i)), "crashed": .bool(i == crashed), "current": .bool(i == crashed)]
                    if !t.name.isEmpty { thread["name"] = .string(t.name) }
                    if i != crashed { thread["stacktrace"] = stacktraceJSON(t, log: log, executable: executable) }
                    return .object(thread)
                })
        ]
        event["debug_meta"] = ["images": .array(log.images.map { imageJSON($0, architecture: log.architecture) })]
        var extra: [String: JSONValue] = ["crash_log": "swift-backtrace"]
        if log.omittedThreads > 0 { extra["omitted_threads"] = .int(Int64(log.omittedThreads)) }
        if log.omittedImages > 0 { extra["omitted_images"] = .int(Int64(log.omittedImages)) }
        event["extra"] = .object(extra)
        return .object(event)
    }

    /// What the log says killed the process: the runtime's words when it has them, else the signal.
    static func exceptionJSON(_ log: SwiftBacktraceLog, stacktrace: JSONValue) -> JSONValue {
        var meta: [String: JSONValue] = [:]
        if let s = log.signal { meta["signal"] = ["number": .int(Int64(s.number)), "name": .string(s.name)] }
        var mechanism: [String: JSONValue] = ["type": "swift-backtrace", "handled": false, "meta": .object(meta)]
        let signalName = log.signal?.name ?? "crash"
        var type = signalName, value = "\(log.description) at \(log.faultAddress.hex)"
        if let failure = log.runtimeFailure {
            type = "Swift runtime failure"
            value = failure
            mechanism["data"] = ["message_source": "swift-backtrace", "message": .string(log.description)]
        } else if log.endedInAssertionFailure {
            // The message went to stderr, not into the log: say so rather than invent it.
            type = "Swift fatal error"
            value = "fatal error, precondition or assertion failure (its message is on the program's stderr; the Swift crash log does not carry it)"
            var data: [String: JSONValue] = ["message_source": "swift-backtrace"]
            if let loc = log.assertionFailureCaller?.sourceLocation {
                data["file"] = .string(loc.file)
                data["line"] = .int(Int64(loc.line))
            }
            if let fn = log.assertionFailureCaller?.symbolDescription { data["function"] = .string(functionName(fn)) }
            mechanism["data"] = .object(data)
        } else {
            mechanism["synthetic"] = true  // the type is only the signal's name
        }
        return [
            "type": .string(type), "value": .string(value), "thread_id": .int(Int64(log.crashedThreadIndex)),
            "mechanism": .object(mechanism), "stacktrace": stacktrace
        ]
    }

    /// Caller first, one frame per address. The log's inlined entries are dropped (a symbolicator
    /// expands inlined calls again from DWARF); the out-of-line entry's function and source
    /// location stay on the frame, so the event reads well before any debug file is uploaded, and
    /// a symbolicator that resolves the address replaces them.
    static func stacktraceJSON(_ t: SwiftBacktraceLog.Thread, log: SwiftBacktraceLog, executable: String?) -> JSONValue {
        var frames: [JSONValue] = []
        for f in t.frames where !f.inlined {
            if case .omittedFrames(let n) = f.kind {
                frames.append(["function": .string("<\(n) frames omitted>"), "instruction_addr": "0x0", "in_app": false])
                continue
            }
            guard let a = f.address else { continue }
            var frame: [String: JSONValue] = ["instruction_addr": .string(a.hex)]
            if let m = log.image(containing: a, named: f.image) {
                let path = m.path ?? m.name
                frame["package"] = .string(path)
                frame["image_addr"] = .string(m.base.hex)
                frame["in_app"] = .bool(executable.map { CrashEvent.isInApp(modulePath: path, executable: $0) } ?? !f.system)
            }
            if let d = f.symbolDescription { frame["function"] = .string(functionName(d)) }
            if let s = f.symbol { frame["raw_function"] = .string(s); frame["symbol"] = .string(s) }
            if let loc = f.sourceLocation, loc.line > 0 {
                frame["filename"] = .string(loc.file)
                frame["abs_path"] = .string(loc.file)
                frame["lineno"] = .int(Int64(loc.line))
                if loc.column > 0 { frame["colno"] = .int(Int64(loc.column)) }
            }
            if f.symbol != nil { frame["data"] = ["symbolicated_by": "swift-backtrace"] }
            frames.append(.object(frame))
        }
        // Sentry's adjustment is per stack, not per frame: an async resume point below the top
        // (an exact address) is looked up like a return address (docs/CRASH-REPORT.md).
        var st: [String: JSONValue] = ["frames": .array(frames.reversed()), "instruction_addr_adjustment": "all_but_first"]
        if !t.registers.isEmpty {
            var regs: [String: JSONValue] = [:]
            for r in t.registers { regs[r.name] = .string(r.value.hex) }
            st["registers"] = .object(regs)
        }
        return .object(st)
    }

    static func imageJSON(_ m: SwiftBacktraceLog.Image, architecture: String) -> JSONValue {
        // The log gives the end of the text only: the size covers every code address.
        DebugImage(codeFile: m.path ?? m.name, base: m.base, size: m.endOfText.value &- m.base.value, buildID: m.buildID, arch: architecture).json
    }

    /// `boom(_:) + 320` → `boom(_:)`.
    static func functionName(_ description: String) -> String {
        // The last " + " (searched from the end, as NSString's backwards search did).
        if let start = description.indices.last(where: { description[$0...].hasPrefix(" + ") }),
            description[description.index(start, offsetBy: 3)...].allSatisfy(\.isNumber)
        {
            return String(description[..<start])
        }
        return description
    }

    /// The main executable: the image named like the main thread (the process name, which the
    /// kernel cuts to 15 bytes), else the first image with a path.
    static func executablePath(_ log: SwiftBacktraceLog) -> String? {
        if let main = log.threads.first?.name, !main.isEmpty,
            let m = log.images.first(where: { $0.name == main || ($0.name.hasPrefix(main) && main.utf8.count == 15) })
        {
            return m.path ?? m.name
        }
        return log.images.first { $0.path != nil }?.path
    }

    /// A stable 32-hex-digit event id derived from the log's bytes (two FNV-1a 64-bit hashes).
    public static func eventID(for data: Data) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x6c62_272e_07bb_0142
        for byte in data {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = b ^ (b >> 29)
        }
        func hex(_ v: UInt64) -> String { let s = String(v, radix: 16); return String(repeating: "0", count: 16 - s.count) + s }
        return hex(a) + hex(b)
    }
}
