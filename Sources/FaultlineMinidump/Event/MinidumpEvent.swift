// A walked minidump as a Sentry event of the same shape CrashEvent gives Faultline's own reports
// (so the server's symbolication, grouping and pages read it unchanged): an exception with the
// crashing thread's stack, every thread, the modules as debug images, os and device contexts.
import FaultlineProtocol

public enum MinidumpEvent {
    /// Builds the event. `timestamp` is used when the dump does not carry its own time.
    public static func make(
        dump: Minidump, walk: MinidumpStackwalk, eventID: String, timestamp: Double,
        sdkName: String = "faultline.minidump", sdkVersion: String = FaultlineVersion.string
    ) -> JSONValue {
        let time = dump.header.timestamp > 0 ? Double(dump.header.timestamp) : timestamp
        var skeleton = EventSkeleton(eventID: eventID, timestamp: time, level: "fatal", sdkName: sdkName, sdkVersion: sdkVersion)
        skeleton.logger = "faultline.minidump"
        skeleton.contexts = contexts(dump)
        var event = skeleton.fields

        // Without a system info stream, the architecture is the one whose context the walker read.
        let arch = dump.systemInfo?.architecture ?? AMD64Context.architecture.sentryName
        let images = dump.modules.map {
            DebugImage(codeFile: $0.path, base: Address($0.base), size: $0.size, buildID: $0.buildID, arch: arch)
        }
        let imageMap = DebugImageMap(images)
        let executable = dump.modules.first?.path ?? ""
        event["debug_meta"] = ["images": .array(images.map(\.json))]

        var threads: [JSONValue] = []
        for t in walk.threads {
            var thread: [String: JSONValue] = ["id": .int(Int64(t.id)), "crashed": .bool(t.crashed), "current": .bool(t.crashed)]
            if let name = t.name { thread["name"] = .string(name) }
            // The crashing thread's stack is the exception's, as in Faultline's own crash events.
            if !t.crashed || dump.exception == nil {
                thread["stacktrace"] = stacktrace(t, images: imageMap, executable: executable)
            }
            threads.append(.object(thread))
        }
        event["threads"] = ["values": .array(threads)]

        var tags: [String: JSONValue] = [:]
        if let e = dump.exception {
            let signal = e.signal
            tags["signal"] = .string(signal.name)
            var value: [String: JSONValue] = [
                "type": .string(signal.name),
                "value": .string("\(signal.name) / \(signal.codeName) at \(Address(e.address).hex)"),
                "thread_id": .int(Int64(e.threadID)),
                "mechanism": [
                    "type": "minidump", "synthetic": true, "handled": false,
                    "meta": [
                        "signal": [
                            "number": .int(Int64(signal.number)), "code": .int(Int64(signal.code)), "name": .string(signal.name),
                            "code_name": .string(signal.codeName)
                        ]
                    ]
                ]
            ]
            if let crashed = walk.crashingThread {
                value["stacktrace"] = stacktrace(crashed, images: imageMap, executable: executable)
            }
            event["exception"] = ["values": [.object(value)]]
        }
        if !tags.isEmpty { event["tags"] = .object(tags) }
        var extra: [String: JSONValue] = [:]
        if let crashed = walk.crashingThread { extra["unwind_stopped_by"] = .string(crashed.stoppedBy) }
        if walk.threadsOmitted > 0 { extra["threads_omitted"] = .int(Int64(walk.threadsOmitted)) }
        if !extra.isEmpty { event["extra"] = .object(extra) }
        return .object(event)
    }

    /// Frames caller-first with their trust; every frame but the innermost is a return address.
    static func stacktrace(_ t: WalkedThread, images: DebugImageMap, executable: String) -> JSONValue {
        var frames: [JSONValue] = []
        for f in t.frames.reversed() {
            var frame: [String: JSONValue] = ["instruction_addr": .string(f.address.address.hex), "trust": .string(f.trust.rawValue)]
            if let image = images.image(containing: f.address.address.value) {
                let path = image.codeFile ?? ""
                frame["package"] = .string(path)
                frame["image_addr"] = .string(image.base.hex)
                frame["in_app"] = .bool(isInApp(modulePath: path, executable: executable))
            }
            frames.append(.object(frame))
        }
        var registers: [String: JSONValue] = [:]
        for (name, value) in t.registers?.named ?? [] { registers[name] = .string(Address(value).hex) }
        return ["frames": .array(frames), "registers": .object(registers), "instruction_addr_adjustment": "all_but_first"]
    }

    /// CrashEvent's rule, plus one for dumps: Crashpad names the libraries the dynamic linker
    /// found on the system's search path by soname (`libc.so.6`, `ld-linux-x86-64.so.2`,
    /// `linux-vdso.so.1`), so a module path without a slash is the system's, never the app's.
    static func isInApp(modulePath: String, executable: String) -> Bool {
        if modulePath == executable { return true }
        return modulePath.contains("/") && CrashEvent.isInApp(modulePath: modulePath, executable: executable)
    }

    /// The kernel as `uname` names it. Breakpad writes sysname, release, version and machine in
    /// the CSD string; Crashpad keeps the release's leading numbers in the version fields and
    /// only the rest of it (then version and machine) in the CSD string, so the two are joined.
    static func kernelVersion(_ s: MinidumpSystemInfo) -> String {
        guard let text = s.versionText, !text.isEmpty else { return s.version }
        if text.hasPrefix("Linux ") || text.hasPrefix(s.version) { return text }
        return s.version + text
    }

    /// os, device and process from SystemInfo and the Linux streams; Crashpad's annotations.
    static func contexts(_ dump: Minidump) -> [String: JSONValue] {
        var contexts: [String: JSONValue] = [:]
        var os: [String: JSONValue] = ["type": "os", "name": "Linux"]
        var device: [String: JSONValue] = ["type": "device"]
        if let s = dump.systemInfo {
            os["name"] = .string(s.osName)
            os["kernel_version"] = .string(kernelVersion(s))
            if let arch = s.architecture { device["arch"] = .string(arch) }
            if s.processorCount > 0 { device["processor_count"] = .int(Int64(s.processorCount)) }
        }
        let lsb = dump.linux.lsbFields
        if let distro = lsb["DISTRIB_ID"] ?? lsb["NAME"] { os["distribution_name"] = .string(distro) }
        if let version = lsb["DISTRIB_RELEASE"] ?? lsb["VERSION_ID"] { os["version"] = .string(version) }
        if let pretty = lsb["DISTRIB_DESCRIPTION"] ?? lsb["PRETTY_NAME"] { os["distribution_pretty_name"] = .string(pretty) }
        contexts["os"] = .object(os)
        contexts["device"] = .object(device)
        if let cmdline = dump.linux.commandLine, let first = cmdline.first {
            contexts["process"] = ["type": "process", "executable": .string(first), "arguments": .array(cmdline.dropFirst().map { .string($0) })]
        }
        if let c = dump.crashpadInfo {
            var crashpad: [String: JSONValue] = ["type": "crashpad"]
            if !c.simpleAnnotations.isEmpty { crashpad["annotations"] = .object(c.simpleAnnotations.mapValues { .string($0) }) }
            var modules: [String: JSONValue] = [:]
            for m in c.moduleAnnotations where m.moduleIndex < dump.modules.count {
                var all = m.simpleAnnotations.merging(m.annotationObjects) { a, _ in a }.mapValues { JSONValue.string($0) }
                if !m.listAnnotations.isEmpty { all["list"] = .array(m.listAnnotations.map { .string($0) }) }
                if !all.isEmpty { modules[dump.modules[m.moduleIndex].path] = .object(all) }
            }
            if !modules.isEmpty { crashpad["module_annotations"] = .object(modules) }
            contexts["crashpad"] = .object(crashpad)
        }
        return contexts
    }
}
