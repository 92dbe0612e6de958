// Why a minidump could not be read: every structural fault the reader finds, with where it was.

/// A minidump that is not one, or whose structure points outside itself. The reader throws these
/// instead of trusting an offset, a size or a count it read from the file.
public enum MinidumpError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Shorter than the 32-byte header, or not starting with `MDMP`.
    case notAMinidump(String)
    /// A structure (`what`) at `offset` of `size` bytes does not fit in the file's `fileSize` bytes.
    case outOfBounds(what: String, offset: UInt64, size: UInt64, fileSize: Int)
    /// A count read from the file claims more entries than the space it has could hold.
    case implausibleCount(what: String, count: UInt64, limit: UInt64)
    /// A stream whose declared size is smaller than its fixed part.
    case streamTooSmall(what: String, size: UInt32, needed: Int)
    /// More than one stream of a kind the format allows once (thread list, exception, …).
    case duplicateStream(type: UInt32)

    public var description: String {
        switch self {
        case .notAMinidump(let why): return "not a minidump: \(why)"
        case .outOfBounds(let what, let offset, let size, let fileSize):
            return "minidump truncated or corrupt: \(what) at offset \(offset) (\(size) bytes) lies outside the \(fileSize)-byte file"
        case .implausibleCount(let what, let count, let limit):
            return "minidump corrupt: \(what) claims \(count) entries, at most \(limit) fit"
        case .streamTooSmall(let what, let size, let needed):
            return "minidump corrupt: the \(what) stream has \(size) bytes, its fixed part needs \(needed)"
        case .duplicateStream(let type):
            return "minidump corrupt: stream type 0x\(String(type, radix: 16)) appears more than once"
        }
    }
}
