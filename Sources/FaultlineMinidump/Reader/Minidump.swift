// A minidump read whole: the header, the directory and every stream the reader knows.

/// A parsed minidump. `init(bytes:)` checks every offset, size and count against the file and
/// throws `MinidumpError` for anything that points outside it; streams it does not know are listed
/// in `streams` and otherwise ignored.
public struct Minidump: Sendable {
    public let header: MinidumpHeader
    public let streams: [MinidumpStreamEntry]
    public let threads: [MinidumpThread]
    public let modules: [MinidumpModule]
    public let exception: MinidumpException?
    public let systemInfo: MinidumpSystemInfo?
    public let memory: MinidumpMemory
    public let linux: LinuxProcessStreams
    public let crashpadInfo: CrashpadInfo?
    /// The dump's size in bytes.
    public let byteCount: Int

    /// A directory longer than this is not a dump any writer makes (Crashpad writes about ten).
    static let maxStreams: UInt64 = 4096

    public init(bytes: [UInt8]) throws(MinidumpError) {
        let b = MinidumpBytes(bytes: bytes)
        header = try MinidumpHeader(b)
        byteCount = bytes.count
        let n = try b.checkedCount(
            "stream directory", count: UInt64(header.streamCount), entrySize: 12, offset: UInt64(header.directoryRVA),
            available: min(UInt64(bytes.count), Self.maxStreams * 12))
        var streams: [MinidumpStreamEntry] = []
        for i in 0..<UInt64(n) {
            let e = UInt64(header.directoryRVA) + i * 12
            let entry = MinidumpStreamEntry(
                type: MinidumpStreamType(rawValue: try b.u32(e, "directory")), size: try b.u32(e + 4, "directory"),
                rva: try b.u32(e + 8, "directory"))
            // Unused entries (type 0) may point anywhere; the others must lie inside the file.
            if entry.type.rawValue != 0 {
                try b.check("stream \(entry.type)", offset: UInt64(entry.rva), size: UInt64(entry.size))
            }
            streams.append(entry)
        }
        self.streams = streams

        func only(_ type: MinidumpStreamType) throws(MinidumpError) -> MinidumpStreamEntry? {
            let found = streams.filter { $0.type == type }
            guard found.count <= 1 else { throw .duplicateStream(type: type.rawValue) }
            return found.first
        }
        var threads = try only(.threadList).map { s throws(MinidumpError) in try MinidumpThread.readList(b, s) } ?? []
        if let names = try only(.threadNames) {
            let byID = try MinidumpThread.readNames(b, names)
            for i in threads.indices { threads[i].name = byID[threads[i].id] }
        }
        self.threads = threads
        modules = try only(.moduleList).map { s throws(MinidumpError) in try MinidumpModule.readList(b, s) } ?? []
        exception = try only(.exception).map { s throws(MinidumpError) in try MinidumpException(b, s) }
        systemInfo = try only(.systemInfo).map { s throws(MinidumpError) in try MinidumpSystemInfo(b, s) }
        var ranges = try only(.memoryList).map { s throws(MinidumpError) in try MinidumpMemory.readList(b, s) } ?? []
        ranges += try only(.memory64List).map { s throws(MinidumpError) in try MinidumpMemory.read64List(b, s) } ?? []
        memory = MinidumpMemory(ranges: ranges, bytes: bytes)
        var linux = LinuxProcessStreams()
        for type in [MinidumpStreamType.linuxMaps, .linuxCmdLine, .linuxProcStatus, .linuxLSBRelease, .linuxCPUInfo, .linuxAuxv] {
            if let s = try only(type) { try linux.read(b, s) }
        }
        self.linux = linux
        crashpadInfo = try only(.crashpadInfo).map { s throws(MinidumpError) in try CrashpadInfo(b, s) }
    }

    /// The thread the exception stream names, if the dump has one and lists that thread.
    public var crashingThread: MinidumpThread? {
        guard let id = exception?.threadID else { return nil }
        return threads.first { $0.id == id }
    }

    /// The registers to start a thread's walk from: the exception's context for the crashing
    /// thread (the thread list holds the signal handler's state for it), else the thread's own.
    public func startContext(of thread: MinidumpThread) -> MinidumpCPUContext {
        if let e = exception, e.threadID == thread.id, let c = e.context { return c }
        return thread.context
    }

    /// The module `address` lies in.
    public func module(containing address: UInt64) -> MinidumpModule? {
        modules.first { $0.contains(address) }
    }
}
