// A core file's notes, walked stacks and modules → a Faultline crash report (docs/CRASH-REPORT.md),
// the same JSON the crash core writes, so `faultline symbolicate`, `faultline crashes`, the SDK's
// pickup and the server read a core's crash exactly as a crash the handler caught.
import FoundationEssentials
import FaultlineProtocol

public enum CoreCrashReport {
    /// Where the report came from and what of the core was read (the report's `core` object).
    public struct Provenance: Sendable {
        /// `file` (`faultline symbolicate CORE`) or `core_pattern` (the pipe handler).
        public var source: String
        /// Bytes of core read; memory segments left out of the reduced copy, and why the read
        /// ended early when it did.
        public var bytesRead: UInt64?
        public var segmentsNotKept = 0
        /// Bytes of memory the pipe handler wrote to its temporary copy.
        public var bytesSpooled: UInt64?
        public var incomplete: String?
        /// Where the whole core was kept (`--keep-core`), or why it was not.
        public var keptCore: String?
        public var notKept: String?
        /// How the chained handler (`--then`) fared.
        public var chained: String?
        public init(source: String) { self.source = source }
    }

    /// The report. `stacks` may be empty (threads listed from the notes, without frames) and
    /// may name threads in another order than the notes; the crashing thread is `hints.tid` when
    /// the notes hold it, else the first thread of the notes.
    public static func json(
        notes: CoreNotes, stacks: [CoreThreadStack], modules: [CoreModule], hints: CoreReportHints = CoreReportHints(),
        eventID: String, timestamp: Double, provenance: Provenance, unwindError: String? = nil,
        isReadable: (UInt64) -> Bool = { _ in true }
    ) throws(CoreDumpError) -> JSONValue {
        // A core cut short before its first thread's notes is truncated, not a core without threads.
        guard let firstThread = notes.threads.first else { throw provenance.incomplete.map { .truncated("its notes (\($0))") } ?? .noThreads }
        let crashing = notes.threads.first { $0.tid == hints.tid } ?? firstThread
        let stackByTID = Dictionary(stacks.map { ($0.tid, $0) }, uniquingKeysWith: { first, _ in first })
        let executable = notes.executablePath ?? notes.process?.name ?? hints.threadName ?? ""

        var signalNumber = crashing.signal != 0 ? crashing.signal : (hints.signal ?? 0)
        var code = 0
        var faultAddress: UInt64 = 0
        var sender = 0
        // NT_SIGINFO is the first thread's; it describes the crashing thread only when that is it.
        if let info = notes.signalInfo, crashing.tid == firstThread.tid {
            signalNumber = info.number
            code = info.code
            faultAddress = info.faultAddress
            sender = info.senderPID
        }
        var report: [String: JSONValue] = [
            "format": .string(CrashReport.formatName), "version": .int(Int64(CrashReport.supportedVersion)),
            "arch": .string(CoreLayout.architecture.rawValue), "event_id": .string(eventID),
            "timestamp": ["sec": .int(Int64(timestamp.rounded(.down))), "nsec": .int(Int64((timestamp - timestamp.rounded(.down)) * 1e9))],
            "process": ["pid": .int(Int64(hints.pid ?? notes.process?.pid ?? crashing.tid)), "executable": .string(executable)],
            "thread": ["tid": .int(Int64(crashing.tid)), "name": .string(threadName(crashing.tid, notes: notes, hints: hints, crashing: true))],
            "signal": [
                "number": .int(Int64(signalNumber)), "name": .string(SignalNames.name(signalNumber)), "code": .int(Int64(code)),
                "code_name": .string(SignalNames.codeName(signal: signalNumber, code: code)),
                "fault_address": .string(Address(faultAddress).hex), "sender_pid": .int(Int64(sender))
            ],
            "registers": registersJSON(crashing.registers),
            "modules": .array(modules.map { moduleJSON($0, path: modulePath($0, notes: notes)) }),
            "breadcrumbs": [],
            "context": .object([:]),
            "end": true
        ]
        // The crash core's rule (report_writer.c): a SIGSEGV within 64 KiB of the stack pointer,
        // not the fetch of an instruction, with a readable page within 64 KiB above the fault (the
        // stack the guard pages protect), is a stack overflow.
        let sp = crashing.stackPointer
        let firstAbove = (faultAddress & ~0xfff) &+ 0x1000
        if signalNumber == 11, faultAddress != 0, faultAddress != crashing.programCounter,
            (faultAddress > sp ? faultAddress - sp : sp - faultAddress) <= 64 * 1024,
            stride(from: firstAbove, through: faultAddress &+ 64 * 1024, by: 0x1000).contains(where: isReadable)
        {
            report["stack_overflow"] = true
        }
        let crashingStack = stackByTID[crashing.tid]
        report["frames"] = framesJSON(crashingStack?.frames ?? [])
        if let o = crashingStack?.omitted { report["frames_omitted"] = ["after": .int(Int64(o.after)), "count": .int(Int64(o.count))] }
        report["unwind"] = unwindJSON(crashingStack, error: unwindError)

        var threads: [JSONValue] = [["tid": .int(Int64(crashing.tid)), "name": report["thread"]!["name"]!, "crashed": true]]
        for t in notes.threads where t.tid != crashing.tid {
            var thread: [String: JSONValue] = [
                "tid": .int(Int64(t.tid)), "name": .string(threadName(t.tid, notes: notes, hints: hints, crashing: false)),
                "registers": registersJSON(t.registers)
            ]
            let stack = stackByTID[t.tid]
            thread["frames"] = framesJSON(stack?.frames ?? [])
            thread["unwind"] = unwindJSON(stack, error: unwindError)
            if stack == nil || stack!.frames.isEmpty {
                thread["error"] = .string(stack?.error ?? unwindError ?? "not walked (\(stack?.stoppedBy ?? "no stack"))")
            }
            threads.append(.object(thread))
        }
        report["threads"] = .array(threads)
        report["core"] = provenanceJSON(provenance, malformedNotes: notes.malformedNotes)
        return .object(report)
    }

    /// The kernel keeps no name per thread in a core: the process's comm names its main thread,
    /// %e the thread that crashed.
    static func threadName(_ tid: Int, notes: CoreNotes, hints: CoreReportHints, crashing: Bool) -> String {
        if crashing, let n = hints.threadName { return n }
        if let p = notes.process, p.pid == tid { return p.name }
        return ""
    }

    static func registersJSON(_ registers: [CoreNotes.Register]) -> JSONValue {
        .object(Dictionary(registers.map { ($0.name, JSONValue.string(Address($0.value).hex)) }, uniquingKeysWith: { a, _ in a }))
    }

    static func framesJSON(_ frames: [FrameAddress]) -> JSONValue {
        .array(frames.map { f in ["address": .string(f.address.hex), "kind": f.isReturnAddress ? "return" : "pc"] })
    }

    static func unwindJSON(_ stack: CoreThreadStack?, error: String?) -> JSONValue {
        var u: [String: JSONValue] = [
            "frames_walked": .int(Int64(stack?.framesWalked ?? 0)), "stopped_by": .string(stack?.stoppedBy ?? "error"), "method": "libdwfl"
        ]
        if let e = stack?.error ?? (stack == nil ? error : nil) { u["error"] = .string(e) }
        return .object(u)
    }

    /// The path the process mapped a module from (NT_FILE), as the crash core's /proc/self/maps
    /// has it: libdwfl names libraries by soname. The vDSO has no file: `[vdso]`, as in maps.
    static func modulePath(_ m: CoreModule, notes: CoreNotes) -> String {
        if let mapped = notes.mappings.first(where: { $0.contains(m.base.value) }) { return mapped.path }
        return m.path.hasPrefix("linux-vdso") || m.path.hasPrefix("[vdso") ? "[vdso]" : m.path
    }

    static func moduleJSON(_ m: CoreModule, path: String) -> JSONValue {
        var o: [String: JSONValue] = ["path": .string(path), "base": .string(m.base.hex), "size": .int(Int64(clamping: m.size))]
        if let b = m.buildID { o["build_id"] = .string(b.hex) }
        return .object(o)
    }

    static func provenanceJSON(_ p: Provenance, malformedNotes: Int) -> JSONValue {
        var o: [String: JSONValue] = ["source": .string(p.source)]
        if let n = p.bytesRead { o["bytes_read"] = .int(Int64(clamping: n)) }
        if p.segmentsNotKept > 0 { o["segments_not_kept"] = .int(Int64(p.segmentsNotKept)) }
        if let n = p.bytesSpooled { o["bytes_spooled"] = .int(Int64(clamping: n)) }
        if let i = p.incomplete { o["incomplete"] = .string(i) }
        if let k = p.keptCore { o["kept_core"] = .string(k) }
        if let n = p.notKept { o["core_not_kept"] = .string(n) }
        if let c = p.chained { o["chained"] = .string(c) }
        if malformedNotes > 0 { o["malformed_notes"] = .int(Int64(malformedNotes)) }
        return .object(o)
    }

    /// A new event id: 32 lowercase hex digits.
    public static func newEventID() -> String {
        var g = SystemRandomNumberGenerator()
        return [g.next(), g.next()].map { (v: UInt64) in
            let h = String(v, radix: 16)
            return String(repeating: "0", count: 16 - h.count) + h
        }.joined()
    }
}
