// A core file on disk → its crash report: notes read here, threads walked by libdwfl. What both
// `faultline symbolicate CORE` and the pipe handler (after spooling) run.
import FoundationEssentials
import Glibc
import FaultlineProtocol
import FaultlineFiles

public enum CoreFile {
    /// Whether the file at `path` is an ELF core (e_type ET_CORE); false when it cannot be read.
    public static func isCore(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 18)
        guard pread(fd, &header, header.count, 0) == header.count else { return false }
        return CoreLayout.isCore(prefix: header)
    }

    /// The core's notes (every PT_NOTE segment).
    public static func notes(path: String) throws(CoreDumpError) -> (layout: CoreLayout, notes: CoreNotes) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let header = try read(fd, at: 0, count: CoreLayout.headerSize, what: "ELF header")
        let table = try CoreLayout.programHeaderTable(header: header)
        // The table where `parse` looks for it: at its offset in a buffer that begins with the header.
        let tableBytes = try read(fd, at: table.offset, count: table.count * CoreLayout.programHeaderSize, what: "program headers")
        let layout = try CoreLayout.parse(prefix: header + [UInt8](repeating: 0, count: Int(table.offset) - header.count) + tableBytes)
        var notes = CoreNotes()
        var total = 0
        for s in layout.segments where s.isNote {
            guard s.fileSize <= UInt64(CoreNotes.maximumBytes - total) else { throw .unsupported("notes larger than \(CoreNotes.maximumBytes >> 20) MiB") }
            total += Int(s.fileSize)
            notes.add(segment: try read(fd, at: s.offset, count: Int(s.fileSize), what: "notes"))
        }
        return (layout, notes)
    }

    /// The crash report of the core at `path` (the options as `CoreUnwinder` takes them).
    /// `warn` hears what was not used and why (an executable of another build).
    public static func report(
        path: String, executable: String? = nil, debugDirectories: [String] = [], hints: CoreReportHints = CoreReportHints(),
        provenance: CoreCrashReport.Provenance, budget: FrameBudget = FrameBudget(), deadline: ContinuousClock.Instant? = nil,
        eventID: String = CoreCrashReport.newEventID(), warn: (String) -> Void = { _ in }
    ) throws(CoreDumpError) -> JSONValue {
        let (layout, notes) = try notes(path: path)
        let unwinder = try CoreUnwinder(corePath: path, layout: layout, notes: notes, executable: executable, debugDirectories: debugDirectories)
        if let refused = unwinder.refusedExecutable { warn(refused) }
        var st = stat()
        let found = stat(path, &st) == 0
        let written = found ? Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9 : Date().timeIntervalSince1970
        // A core cut short (a full disk, a copy interrupted) still has its notes, so every thread
        // is listed, but memory past its end is gone: a stack there ends early, and says nothing
        // of why. Said once, here.
        let reach = layout.segments.filter(\.isLoad).map { $0.offset &+ $0.fileSize }.max() ?? 0
        if found, UInt64(max(0, st.st_size)) < reach {
            warn("the core is cut short: it ends at \(st.st_size) bytes, its memory reaches \(reach); stacks in the missing part end early")
        }
        return try CoreCrashReport.json(
            notes: notes, stacks: unwinder.threads(budget: budget, deadline: deadline), modules: unwinder.modules(), hints: hints,
            eventID: eventID, timestamp: hints.time ?? written, provenance: provenance, unwindError: unwinder.attachError,
            isReadable: { a in layout.segments.contains { $0.isLoad && $0.flags & 4 != 0 && $0.contains(a) } })  // PF_R
    }

    private static func read(_ fd: Int32, at offset: UInt64, count: Int, what: String) throws(CoreDumpError) -> [UInt8] {
        guard offset < UInt64(Int64.max) else { throw .truncated(what) }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = retryingOnInterrupt { bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) } }
            guard n > 0 else { throw .truncated(what) }
            done += n
        }
        return bytes
    }
}
