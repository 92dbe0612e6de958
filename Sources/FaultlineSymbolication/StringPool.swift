// The index's string blob, built by interning: each distinct string is stored once.
#if canImport(Glibc)
import Glibc
#endif

/// Interns strings into the blob; pointers from .debug_str repeat, so they are cached first.
struct StringPool {
    var bytes: [UInt8] = [0]
    var byContent: [String: UInt32] = [:]
    var byPointer: [UnsafeRawPointer: UInt32] = [:]

    mutating func intern(_ s: String) -> UInt32 {
        if let r = byContent[s] { return r }
        let r = UInt32(bytes.count)
        if s.utf8.contains(0) { bytes.append(contentsOf: s.utf8.filter { $0 != 0 }) } else { bytes.append(contentsOf: s.utf8) }
        bytes.append(0)
        byContent[s] = r
        return r
    }

    /// Appends without deduplication (partial indexes: never stored, built for speed).
    mutating func append(cString p: UnsafePointer<CChar>) -> UInt32 {
        let r = UInt32(bytes.count)
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: p, count: strlen(p)))
        bytes.append(0)
        return r
    }

    mutating func intern(cString p: UnsafePointer<CChar>) -> UInt32 {
        let key = UnsafeRawPointer(p)
        if let r = byPointer[key] { return r }
        let r = intern(String(cString: p))
        byPointer[key] = r
        return r
    }
}
