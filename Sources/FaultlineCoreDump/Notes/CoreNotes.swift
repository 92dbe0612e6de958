// The notes of a Linux core (PT_NOTE): one NT_PRSTATUS per thread, the signal's siginfo, the
// process's name and the files it had mapped. Parsed here, not by libdwfl, because libdwfl keeps
// the signal and the file list to itself; every record is bounds-checked and a malformed one is
// skipped and counted, never trusted.
import FoundationEssentials
import FaultlineProtocol

public struct CoreNotes: Sendable {
    /// One thread's NT_PRSTATUS (struct elf_prstatus, x86_64).
    public struct ThreadStatus: Sendable, Equatable {
        public var tid: Int
        /// pr_cursig: the signal the thread was handling when the core was written (0 for the
        /// threads that were only stopped for the dump).
        public var signal: Int
        /// The general registers in `CPUArchitecture.x86_64.registerNames`.
        public var registers: [Register]
        public var stackPointer: UInt64 { registers.first { $0.name == "rsp" }?.value ?? 0 }
        public var programCounter: UInt64 { registers.first { $0.name == "rip" }?.value ?? 0 }
    }
    public struct Register: Sendable, Equatable {
        public var name: String
        public var value: UInt64
    }
    /// NT_SIGINFO: the siginfo of the signal that dumped the core.
    public struct SignalInfo: Sendable, Equatable {
        public var number: Int
        public var code: Int
        /// si_addr (meaningful for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP).
        public var faultAddress: UInt64
        /// si_pid, when the signal was sent by a process (si_code <= 0).
        public var senderPID: Int
    }
    /// NT_PRPSINFO: who the process was.
    public struct ProcessStatus: Sendable, Equatable {
        public var pid: Int
        public var parentPID: Int
        public var uid: UInt32
        /// The kernel's comm (at most 15 bytes).
        public var name: String
        /// The start of the command line (at most 80 bytes, arguments separated by spaces).
        public var arguments: String
    }
    /// One NT_FILE entry: a file-backed mapping.
    public struct FileMapping: Sendable, Equatable {
        public var start: UInt64
        public var end: UInt64
        public var fileOffset: UInt64
        public var path: String
        public func contains(_ a: UInt64) -> Bool { a >= start && a < end }
    }

    /// In note order; the kernel writes the thread that took the signal first.
    public var threads: [ThreadStatus] = []
    public var signalInfo: SignalInfo?
    public var process: ProcessStatus?
    public var mappings: [FileMapping] = []
    /// AT_ENTRY from NT_AUXV: the executable's entry point, which tells its mapping apart.
    public var entryPoint: UInt64?
    /// Notes whose size or fields did not add up: skipped, counted here.
    public var malformedNotes = 0

    /// Notes larger than this are not read: a thousand threads take a few MiB.
    public static let maximumBytes = 64 << 20

    static let NT_PRSTATUS: UInt32 = 1
    static let NT_PRPSINFO: UInt32 = 3
    static let NT_AUXV: UInt32 = 6
    static let NT_SIGINFO: UInt32 = 0x5349_4749
    static let NT_FILE: UInt32 = 0x4649_4c45
    static let AT_ENTRY: UInt64 = 9

    /// x86_64 `user_regs_struct` in its own order, as NT_PRSTATUS's pr_reg holds it.
    static let userRegsOrder = [
        "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi",
        "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"
    ]
    static let prstatusRegistersOffset = 112
    static let prstatusSize = 336

    public init() {}

    /// Reads every note of one PT_NOTE segment's bytes (several segments: call `add` for each).
    public init(segment bytes: [UInt8]) {
        add(segment: bytes)
    }

    /// The executable: the mapped file whose mapping holds the entry point, else the first one.
    public var executablePath: String? {
        if let e = entryPoint, let m = mappings.first(where: { $0.contains(e) }) { return m.path }
        return mappings.first?.path
    }

    public mutating func add(segment bytes: [UInt8]) {
        let b = CoreBytes(bytes)
        var at = 0
        while at + 12 <= b.count {
            guard let namesz = b.u32(at), let descsz = b.u32(at + 4), let type = b.u32(at + 8) else { break }
            let nameAt = at + 12
            let descAt = nameAt + Self.aligned(Int(namesz))
            let next = descAt + Self.aligned(Int(descsz))
            // A size that runs past the segment ends the walk: nothing after it can be located.
            guard namesz < 1 << 20, descsz < 1 << 30, next <= b.count, let desc = b.view(descAt, Int(descsz)) else {
                malformedNotes += 1
                break
            }
            let name = b.cString(nameAt, limit: Int(namesz)) ?? ""
            if name == "CORE" { read(type: type, desc: desc) }
            at = next
        }
    }

    private static func aligned(_ n: Int) -> Int { (n + 3) & ~3 }

    private mutating func read(type: UInt32, desc: CoreBytes) {
        switch type {
        case Self.NT_PRSTATUS: if let t = Self.threadStatus(desc) { threads.append(t) } else { malformedNotes += 1 }
        case Self.NT_SIGINFO:
            // Only the first: it belongs to the thread that took the signal.
            guard signalInfo == nil else { return }
            if let s = Self.signalInfo(desc) { signalInfo = s } else { malformedNotes += 1 }
        case Self.NT_PRPSINFO: if let p = Self.processStatus(desc) { process = p } else { malformedNotes += 1 }
        case Self.NT_FILE: if let m = Self.fileMappings(desc) { mappings = m } else { malformedNotes += 1 }
        case Self.NT_AUXV: entryPoint = Self.auxvEntry(desc)
        default: break
        }
    }

    /// Where each register of `CoreLayout.architecture.registerNames` sits in pr_reg.
    static let reportRegisters: [(name: String, index: Int)] = CoreLayout.architecture.registerNames.compactMap { name in
        userRegsOrder.firstIndex(of: name).map { (name, $0) }
    }

    static func threadStatus(_ d: CoreBytes) -> ThreadStatus? {
        guard d.count >= prstatusSize, let cursig = d.i16(12), let pid = d.i32(32) else { return nil }
        var registers: [Register] = []
        registers.reserveCapacity(reportRegisters.count)
        for (name, i) in reportRegisters {
            guard let v = d.u64(prstatusRegistersOffset + 8 * i) else { return nil }
            registers.append(Register(name: name, value: v))
        }
        return ThreadStatus(tid: Int(pid), signal: Int(cursig), registers: registers)
    }

    static func signalInfo(_ d: CoreBytes) -> SignalInfo? {
        guard d.count >= 24, let signo = d.i32(0), let code = d.i32(8) else { return nil }
        let address = d.u64(16) ?? 0
        // si_pid shares the union with si_addr: it means a sender only for a user-sent signal.
        let sender = code <= 0 ? Int(d.i32(16) ?? 0) : 0
        return SignalInfo(number: Int(signo), code: Int(code), faultAddress: code <= 0 ? 0 : address, senderPID: sender)
    }

    static func processStatus(_ d: CoreBytes) -> ProcessStatus? {
        guard d.count >= 136, let uid = d.u32(16), let pid = d.i32(24), let ppid = d.i32(28) else { return nil }
        return ProcessStatus(
            pid: Int(pid), parentPID: Int(ppid), uid: uid,
            name: d.cString(40, limit: 16) ?? "", arguments: (d.cString(56, limit: 80) ?? "").trimmingTrailingSpaces)
    }

    static func fileMappings(_ d: CoreBytes) -> [FileMapping]? {
        guard let count = d.u64(0), let pageSize = d.u64(8) else { return nil }
        // Each entry takes 24 bytes of triples plus at least a NUL: a count the note cannot hold is a lie.
        guard count <= UInt64(d.count) / 25, pageSize <= 1 << 30 else { return nil }
        var mappings: [FileMapping] = []
        var nameAt = 16 + Int(count) * 24
        for i in 0..<Int(count) {
            let at = 16 + i * 24
            guard let start = d.u64(at), let end = d.u64(at + 8), let pages = d.u64(at + 16),
                let length = d.cStringLength(nameAt, limit: d.count - nameAt), let path = d.cString(nameAt, limit: length)
            else { return nil }
            nameAt += length + 1
            let (offset, overflow) = pages.multipliedReportingOverflow(by: pageSize)
            mappings.append(FileMapping(start: start, end: end, fileOffset: overflow ? 0 : offset, path: path))
        }
        return mappings
    }

    static func auxvEntry(_ d: CoreBytes) -> UInt64? {
        var at = 0
        while let type = d.u64(at), let value = d.u64(at + 8) {
            if type == AT_ENTRY { return value }
            if type == 0 { return nil }
            at += 16
        }
        return nil
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
