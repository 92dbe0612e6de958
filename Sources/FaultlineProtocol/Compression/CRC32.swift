// CRC-32 (IEEE, as gzip and `.gnu_debuglink` use it), computed by zlib. A file's CRC, which
// reads, is FaultlineFiles' (`CRC32.ofFile`).
import FoundationEssentials
import CZlib

public enum CRC32 {
    /// Continues `crc` over `bytes` (start from 0).
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32(uLong(crc), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    public static func of(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { update(0, $0) }
    }
}
