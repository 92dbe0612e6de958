// The MDMP header: signature, version, where the stream directory is.

/// The 32-byte header every minidump starts with.
public struct MinidumpHeader: Hashable, Sendable {
    public static let signature: UInt32 = 0x504D_444D  // "MDMP" little-endian
    public static let size: UInt64 = 32

    /// The low 16 bits are the format version (0xA793); the high ones are implementation-specific.
    public var version: UInt32
    public var streamCount: UInt32
    public var directoryRVA: UInt32
    /// Seconds since the epoch when the dump was written (`time_date_stamp`).
    public var timestamp: UInt32
    public var flags: UInt64

    /// Whether `prefix` (a file's first bytes) starts like a minidump: the signature only, so a
    /// caller can pick the reader before reading the whole file.
    public static func starts(_ prefix: some Collection<UInt8>) -> Bool {
        Array(prefix.prefix(4)) == [0x4D, 0x44, 0x4D, 0x50]
    }

    init(_ b: MinidumpBytes) throws(MinidumpError) {
        guard b.count >= Int(Self.size) else { throw .notAMinidump("\(b.count) bytes, shorter than the 32-byte header") }
        guard try b.u32(0, "signature") == Self.signature else { throw .notAMinidump("no MDMP signature") }
        version = try b.u32(4, "header")
        streamCount = try b.u32(8, "header")
        directoryRVA = try b.u32(12, "header")
        timestamp = try b.u32(20, "header")
        flags = try b.u64(24, "header")
    }
}
