// The exception stream: which thread crashed, with which signal, where, and its registers then.

/// Why the process was dumped. On Linux the code is the signal number and the flags its `si_code`.
public struct MinidumpException: Hashable, Sendable {
    public var threadID: UInt32
    /// The signal number on Linux (`exception_code`).
    public var code: UInt32
    /// `si_code` on Linux (`exception_flags`).
    public var flags: UInt32
    /// The faulting address (`si_addr`).
    public var address: UInt64
    /// The crashing thread's registers at the fault (nil when the dump has none).
    public var context: MinidumpCPUContext?

    public var signal: LinuxSignal { LinuxSignal(number: code, code: Int32(bitPattern: flags)) }

    static let size: UInt32 = 168

    init(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) {
        guard s.size >= Self.size else { throw .streamTooSmall(what: "exception", size: s.size, needed: Int(Self.size)) }
        let e = UInt64(s.rva)
        threadID = try b.u32(e, "exception")
        code = try b.u32(e + 8, "exception")
        flags = try b.u32(e + 12, "exception")
        address = try b.u64(e + 24, "exception")
        let contextSize = try b.u32(e + 160, "exception context")
        let contextRVA = try b.u32(e + 164, "exception context")
        context = contextSize == 0 ? nil : try MinidumpCPUContext.read(b, size: contextSize, rva: contextRVA)
    }
}
