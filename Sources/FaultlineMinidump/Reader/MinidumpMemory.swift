// The memory the dump captured (MemoryList and Memory64List), read by address.

/// Captured ranges of the process's memory: thread stacks, bytes around the crashing pc, and
/// whatever else the writer chose. Reads never reach outside a captured range.
public struct MinidumpMemory: Sendable {
    /// One captured range: `size` bytes of the process at `address`, stored at `fileOffset`.
    public struct Range: Hashable, Sendable {
        public var address: UInt64
        public var size: UInt64
        var fileOffset: UInt64
        public var end: UInt64 { address &+ size }
    }

    /// Sorted by address; overlapping ranges are kept (the first that holds a read answers it).
    public let ranges: [Range]
    private let bytes: [UInt8]

    init(ranges: [Range], bytes: [UInt8]) {
        self.ranges = ranges.sorted { $0.address < $1.address }
        self.bytes = bytes
    }

    /// `count` bytes at `address`, or nil unless one captured range holds all of them.
    public func read(address: UInt64, count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, let r = range(containing: address) else { return nil }
        let offset = address - r.address
        guard UInt64(count) <= r.size - offset else { return nil }
        let start = Int(r.fileOffset + offset)
        return bytes[start..<start + count]
    }

    /// The little-endian 64-bit word at `address`, if captured.
    public func readWord(_ address: UInt64) -> UInt64? {
        guard let b = read(address: address, count: 8) else { return nil }
        var v: UInt64 = 0
        for byte in b.reversed() { v = v << 8 | UInt64(byte) }
        return v
    }

    /// The captured range holding `address`.
    public func range(containing address: UInt64) -> Range? {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].address <= address { lo = mid + 1 } else { hi = mid }
        }
        // Ranges may overlap: look back past the nearest start for one that still covers `address`.
        var i = lo - 1
        while i >= 0 && lo - i <= 8 {
            let r = ranges[i]
            if address - r.address < r.size { return r }
            i -= 1
        }
        return nil
    }

    static func readList(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) -> [Range] {
        guard s.size >= 4 else { throw .streamTooSmall(what: "memory list", size: s.size, needed: 4) }
        let base = UInt64(s.rva)
        let n = try b.checkedCount(
            "memory list", count: UInt64(try b.u32(base, "memory list")), entrySize: 16, offset: base + 4,
            available: UInt64(s.size) - 4)
        var ranges: [Range] = []
        ranges.reserveCapacity(n)
        for i in 0..<UInt64(n) {
            let e = base + 4 + i * 16
            let size = UInt64(try b.u32(e + 8, "memory descriptor"))
            let rva = UInt64(try b.u32(e + 12, "memory descriptor"))
            try b.check("memory range", offset: rva, size: size)
            ranges.append(Range(address: try b.u64(e, "memory descriptor"), size: size, fileOffset: rva))
        }
        return ranges
    }

    /// Memory64List: the ranges' bytes lie one after another from `base_rva`.
    static func read64List(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) -> [Range] {
        guard s.size >= 16 else { throw .streamTooSmall(what: "memory64 list", size: s.size, needed: 16) }
        let base = UInt64(s.rva)
        let n = try b.checkedCount(
            "memory64 list", count: try b.u64(base, "memory64 list"), entrySize: 16, offset: base + 16,
            available: UInt64(s.size) - 16)
        var offset = try b.u64(base + 8, "memory64 list")
        var ranges: [Range] = []
        ranges.reserveCapacity(n)
        for i in 0..<UInt64(n) {
            let e = base + 16 + i * 16
            let size = try b.u64(e + 8, "memory64 descriptor")
            try b.check("memory64 range", offset: offset, size: size)
            ranges.append(Range(address: try b.u64(e, "memory64 descriptor"), size: size, fileOffset: offset))
            offset += size  // cannot overflow: check() proved offset + size ≤ file size
        }
        return ranges
    }
}
