// CRC-32 (IEEE, as gzip and `.gnu_debuglink` use it), computed by zlib.
import FoundationEssentials
import Glibc
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

    /// The CRC of a whole file, read in 1 MiB pieces; nil when it cannot be read.
    public static func ofFile(_ path: String) -> UInt32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let size = 1 << 20
        let buf = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buf.deallocate() }
        var crc: UInt32 = 0
        while true {
            let n = read(fd, buf, size)
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { return crc }
            crc = update(crc, UnsafeRawBufferPointer(start: buf, count: n))
        }
    }
}
