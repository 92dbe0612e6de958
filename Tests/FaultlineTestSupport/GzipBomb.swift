// A gzip bomb for hostile-answer tests: a valid gzip stream of zeros, ~1 KiB per MiB it inflates
// to, built in milliseconds (one MiB is deflated once and its bytes repeated).
import CZlib
import Foundation

public enum GzipBomb {
    /// A gzip member of `inflatedMiB` MiB of zeros. One MiB of zeros is deflated (raw, level 9) with
    /// Z_FULL_FLUSH, which ends byte-aligned and forgets the window, so its bytes stand alone and
    /// can be repeated; then an empty final block and the trailer (CRC-32 by crc32_combine, size).
    public static func make(inflatedMiB: Int) -> Data {
        let mebibyte = 1 << 20
        var z = z_stream()
        precondition(deflateInit2_(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&z) }
        var zeros = [UInt8](repeating: 0, count: mebibyte)
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        func deflateStep(_ input: UnsafeMutablePointer<UInt8>?, _ count: Int, _ flush: Int32) -> Data {
            z.next_in = input
            z.avail_in = uInt(count)
            var out = Data()
            repeat {
                scratch.withUnsafeMutableBufferPointer { b in
                    z.next_out = b.baseAddress
                    z.avail_out = uInt(b.count)
                    precondition(deflate(&z, flush) != Z_STREAM_ERROR)
                    out.append(b.baseAddress!, count: b.count - Int(z.avail_out))
                }
            } while z.avail_out == 0
            return out
        }
        let segment = zeros.withUnsafeMutableBufferPointer { deflateStep($0.baseAddress, mebibyte, Z_FULL_FLUSH) }
        let end = deflateStep(nil, 0, Z_FINISH)

        let segmentCRC = zeros.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt(mebibyte)) }
        var crc: uLong = 0
        for _ in 0..<inflatedMiB { crc = crc32_combine(crc, segmentCRC, off_t(mebibyte)) }
        let size = UInt32(truncatingIfNeeded: inflatedMiB * mebibyte)

        var bomb = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff])  // gzip, deflate, no name, best compression, OS unknown
        bomb.reserveCapacity(10 + segment.count * inflatedMiB + end.count + 8)
        for _ in 0..<inflatedMiB { bomb.append(segment) }
        bomb.append(end)
        for v in [UInt32(truncatingIfNeeded: crc), size] { withUnsafeBytes(of: v.littleEndian) { bomb.append(contentsOf: $0) } }
        return bomb
    }
}
