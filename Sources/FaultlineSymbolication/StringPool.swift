// The index's string blob, built by interning: each distinct string is stored once.
//
// Why hand-made hash tables and not [String: UInt32]: a full build of the Python library interns
// hundreds of thousands of names and paths; a Swift String per lookup (allocation, UTF-8 checks)
// and SipHash cost ~8% of the build. Here a lookup hashes the bytes where they lie (.debug_str,
// or the blob itself) and compares them with memcmp.
#if canImport(Glibc)
    import Glibc
#endif

/// Interns strings into the blob; pointers from .debug_str repeat, so they are cached first.
struct StringPool {
    private(set) var bytes: [UInt8] = [0]
    /// Open addressing over blob offsets (`empty` marks a free slot); the key is the string there.
    private var contentSlots = [UInt32](repeating: StringPool.empty, count: 1 << 12)
    private var contentCount = 0
    /// Open addressing: a C string's address → its blob offset.
    private var pointerKeys = [UInt](repeating: 0, count: 1 << 12)
    private var pointerValues = [UInt32](repeating: 0, count: 1 << 12)
    private var pointerCount = 0

    private static let empty = UInt32.max

    mutating func intern(_ s: String) -> UInt32 {
        var s = s
        if s.utf8.contains(0) { s = String(decoding: s.utf8.filter { $0 != 0 }, as: UTF8.self) }
        return s.withUTF8 { intern(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Appends without deduplication (partial indexes: never stored, built for speed).
    mutating func append(cString p: UnsafePointer<CChar>) -> UInt32 {
        let r = UInt32(bytes.count)
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: p, count: strlen(p)))
        bytes.append(0)
        return r
    }

    mutating func intern(cString p: UnsafePointer<CChar>) -> UInt32 {
        let key = UInt(bitPattern: p)
        var mask = pointerKeys.count - 1
        var i = StringPool.mix(UInt64(key)) & mask
        while pointerKeys[i] != 0 {
            if pointerKeys[i] == key { return pointerValues[i] }
            i = (i + 1) & mask
        }
        let r = intern(bytes: UnsafeRawBufferPointer(start: p, count: strlen(p)))
        if (pointerCount + 1) * 2 > pointerKeys.count {
            growPointers()
            mask = pointerKeys.count - 1
            i = StringPool.mix(UInt64(key)) & mask
            while pointerKeys[i] != 0 { i = (i + 1) & mask }
        }
        pointerKeys[i] = key
        pointerValues[i] = r
        pointerCount += 1
        return r
    }

    /// Interns the bytes (no NUL among them).
    mutating func intern(bytes s: UnsafeRawBufferPointer) -> UInt32 {
        let h = StringPool.hash(s)
        var mask = contentSlots.count - 1
        var i = h & mask
        while contentSlots[i] != StringPool.empty {
            if equals(contentSlots[i], s) { return contentSlots[i] }
            i = (i + 1) & mask
        }
        let r = UInt32(bytes.count)
        bytes.append(contentsOf: s)
        bytes.append(0)
        if (contentCount + 1) * 2 > contentSlots.count {
            growContent()
            mask = contentSlots.count - 1
            i = h & mask
            while contentSlots[i] != StringPool.empty { i = (i + 1) & mask }
        }
        contentSlots[i] = r
        contentCount += 1
        return r
    }

    private func equals(_ offset: UInt32, _ s: UnsafeRawBufferPointer) -> Bool {
        bytes.withUnsafeBytes { b in
            let o = Int(offset)
            guard o + s.count < b.count, b[o + s.count] == 0 else { return false }
            return s.isEmpty || memcmp(b.baseAddress! + o, s.baseAddress!, s.count) == 0
        }
    }

    private mutating func growContent() {
        let old = contentSlots
        var slots = [UInt32](repeating: StringPool.empty, count: old.count * 2)
        let mask = slots.count - 1
        bytes.withUnsafeBytes { b in
            for o in old where o != StringPool.empty {
                let start = b.baseAddress! + Int(o)
                var i = StringPool.hash(UnsafeRawBufferPointer(start: start, count: strlen(start.assumingMemoryBound(to: CChar.self)))) & mask
                while slots[i] != StringPool.empty { i = (i + 1) & mask }
                slots[i] = o
            }
        }
        contentSlots = slots
    }

    private mutating func growPointers() {
        let keys = pointerKeys, values = pointerValues
        pointerKeys = [UInt](repeating: 0, count: keys.count * 2)
        pointerValues = [UInt32](repeating: 0, count: keys.count * 2)
        let mask = pointerKeys.count - 1
        for (k, v) in zip(keys, values) where k != 0 {
            var i = StringPool.mix(UInt64(k)) & mask
            while pointerKeys[i] != 0 { i = (i + 1) & mask }
            pointerKeys[i] = k
            pointerValues[i] = v
        }
    }

    /// A 64-bit finaliser (splitmix64's): spreads addresses and the byte hash over the table.
    @inline(__always) static func mix(_ x: UInt64) -> Int {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: z ^ (z >> 31))
    }

    /// Eight bytes at a time (names are often long mangled strings), then the tail.
    static func hash(_ s: UnsafeRawBufferPointer) -> Int {
        var h: UInt64 = UInt64(s.count) &* 0x9E37_79B9_7F4A_7C15
        var i = 0
        while i + 8 <= s.count {
            h = (h ^ s.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x1000_0000_01B3 &+ 0x5851_F42D
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < s.count { tail |= UInt64(s[i]) << shift; shift += 8; i += 1 }
        return mix(h ^ tail)
    }
}
