// A thread's registers as the dump saved them: MD_CONTEXT_AMD64 read, other CPUs kept as raw flags.
import FaultlineProtocol

/// The registers of one thread (or of the exception) as the dump stored them.
public enum MinidumpCPUContext: Hashable, Sendable {
    case amd64(AMD64Context)
    /// A context of another CPU, or too short for its flags: kept so the thread is still listed.
    case unsupported(flags: UInt32, size: UInt32)

    public var amd64: AMD64Context? { if case .amd64(let c) = self { c } else { nil } }

    /// The program counter, when the context is one the reader knows.
    public var instructionPointer: UInt64? { amd64?.rip }

    static func read(_ b: MinidumpBytes, size: UInt32, rva: UInt32) throws(MinidumpError) -> MinidumpCPUContext {
        guard size >= 52 else { throw .streamTooSmall(what: "thread context", size: size, needed: 52) }
        try b.check("thread context", offset: UInt64(rva), size: UInt64(size))
        let flags = try b.u32(UInt64(rva) + 48, "context flags")
        guard flags & AMD64Context.cpuFlag == AMD64Context.cpuFlag, size >= AMD64Context.size else {
            return .unsupported(flags: flags, size: size)
        }
        return .amd64(try AMD64Context(b, rva: UInt64(rva), flags: flags))
    }
}

/// x86_64 registers (`MDRawContextAMD64`); only what the context flags say was saved is meaningful.
public struct AMD64Context: Hashable, Sendable {
    /// The architecture of this context, the only one the minidump walker reads.
    public static let architecture: CPUArchitecture = .x86_64
    static let cpuFlag: UInt32 = 0x0010_0000
    static let size: UInt32 = 1232
    /// `MD_CONTEXT_AMD64_CONTROL`: rip, rsp, eflags, cs, ss.
    public static let controlFlag: UInt32 = cpuFlag | 0x1
    /// `MD_CONTEXT_AMD64_INTEGER`: the general registers other than rsp.
    public static let integerFlag: UInt32 = cpuFlag | 0x2

    public var flags: UInt32
    public var rax: UInt64, rcx: UInt64, rdx: UInt64, rbx: UInt64
    public var rsp: UInt64, rbp: UInt64, rsi: UInt64, rdi: UInt64
    /// r8 … r15.
    public var r: [UInt64]
    public var rip: UInt64
    public var eflags: UInt32

    public var hasControl: Bool { flags & Self.controlFlag == Self.controlFlag }
    public var hasInteger: Bool { flags & Self.integerFlag == Self.integerFlag }

    public init(rip: UInt64, rsp: UInt64, rbp: UInt64, flags: UInt32 = AMD64Context.controlFlag | AMD64Context.integerFlag) {
        self.flags = flags
        rax = 0; rcx = 0; rdx = 0; rbx = 0; rsi = 0; rdi = 0
        self.rsp = rsp; self.rbp = rbp; self.rip = rip
        r = Array(repeating: 0, count: 8); eflags = 0
    }

    init(_ b: MinidumpBytes, rva: UInt64, flags: UInt32) throws(MinidumpError) {
        self.flags = flags
        eflags = try b.u32(rva + 68, "context")
        var g: [UInt64] = []
        for i in 0..<17 { g.append(try b.u64(rva + 120 + UInt64(i) * 8, "context")) }
        rax = g[0]; rcx = g[1]; rdx = g[2]; rbx = g[3]; rsp = g[4]; rbp = g[5]; rsi = g[6]; rdi = g[7]
        r = Array(g[8..<16])
        rip = g[16]
    }

    /// Registers 0–16 in DWARF's x86_64 numbering (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
    /// r8–r15, return address column = rip): what libdwfl's initial frame takes.
    public var dwarfRegisters: [UInt64] { [rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp] + r + [rip] }

    /// Name and value of each saved register, for an event's `registers`.
    public var named: [(name: String, value: UInt64)] {
        var list: [(String, UInt64)] = []
        if hasInteger {
            list += [("rax", rax), ("rbx", rbx), ("rcx", rcx), ("rdx", rdx), ("rsi", rsi), ("rdi", rdi), ("rbp", rbp)]
            for (i, v) in r.enumerated() { list.append(("r\(i + 8)", v)) }
        }
        if hasControl { list += [("rsp", rsp), ("rip", rip)] }
        return list
    }
}
