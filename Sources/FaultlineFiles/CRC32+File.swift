// The CRC-32 of a whole file (`.gnu_debuglink` checks): FaultlineProtocol's CRC over FaultlineFiles' reads.
import FaultlineProtocol
import Glibc

extension CRC32 {
    /// The CRC of a whole file, read in 1 MiB pieces; nil when it cannot be read.
    public static func ofFile(_ path: String) -> UInt32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var crc: UInt32 = 0
        return forEachPiece(of: fd) { crc = update(crc, $0) } ? crc : nil
    }
}
