// The thread list: each thread's id, its stack's captured memory and its registers.

/// One thread of the dumped process.
public struct MinidumpThread: Hashable, Sendable {
    public var id: UInt32
    /// From the thread-names stream, when the dump has one.
    public var name: String?
    /// Where the thread's stack memory starts and how much of it was captured.
    public var stackStart: UInt64
    public var stackSize: UInt64
    public var context: MinidumpCPUContext

    static let entrySize: UInt64 = 48

    static func readList(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) -> [MinidumpThread] {
        guard s.size >= 4 else { throw .streamTooSmall(what: "thread list", size: s.size, needed: 4) }
        let base = UInt64(s.rva)
        let n = try b.checkedCount(
            "thread list", count: UInt64(try b.u32(base, "thread list")), entrySize: entrySize, offset: base + 4,
            available: UInt64(s.size) - 4)
        var threads: [MinidumpThread] = []
        threads.reserveCapacity(n)
        for i in 0..<UInt64(n) {
            let e = base + 4 + i * entrySize
            let contextSize = try b.u32(e + 40, "thread context descriptor")
            let contextRVA = try b.u32(e + 44, "thread context descriptor")
            threads.append(
                MinidumpThread(
                    id: try b.u32(e, "thread"), name: nil, stackStart: try b.u64(e + 24, "thread stack"),
                    stackSize: UInt64(try b.u32(e + 32, "thread stack")),
                    context: try MinidumpCPUContext.read(b, size: contextSize, rva: contextRVA)))
        }
        return threads
    }

    /// The thread-names stream (`MINIDUMP_THREAD_NAME_LIST`): thread id → name.
    static func readNames(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) -> [UInt32: String] {
        guard s.size >= 4 else { throw .streamTooSmall(what: "thread names", size: s.size, needed: 4) }
        let base = UInt64(s.rva)
        let n = try b.checkedCount(
            "thread names", count: UInt64(try b.u32(base, "thread names")), entrySize: 12, offset: base + 4,
            available: UInt64(s.size) - 4)
        var names: [UInt32: String] = [:]
        for i in 0..<UInt64(n) {
            let e = base + 4 + i * 12
            let rva = try b.u64(e + 4, "thread name")
            guard rva <= UInt64(UInt32.max) else {
                throw .outOfBounds(what: "thread name", offset: rva, size: 4, fileSize: b.count)
            }
            names[try b.u32(e, "thread name")] = try b.utf16String(at: UInt32(rva), "thread name")
        }
        return names
    }
}
