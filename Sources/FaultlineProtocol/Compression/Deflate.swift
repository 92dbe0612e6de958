// Compression (zlib): gzip request bodies and upload chunks, cheap zlib-format storage of raw
// events. Every zlib result is checked: a failed compression is nil, never a short or corrupt chunk.
import FoundationEssentials
import CZlib

public enum Deflate {
    /// zlib-format compression at `level` (1 = fastest), used for stored raw events. zlib fails
    /// here only without memory, so that is a precondition.
    public static func compress(_ data: Data, level: Int32 = 1) -> Data {
        if level == 1, let out = pooledCompress(data) { return out }
        var destLen = compressBound(uLong(data.count))
        let dst = UnsafeMutablePointer<Bytef>.allocate(capacity: Int(destLen))
        defer { dst.deallocate() }
        let rc = data.withUnsafeBytes { src in
            compress2(dst, &destLen, src.bindMemory(to: Bytef.self).baseAddress, uLong(data.count), level)
        }
        precondition(rc == Z_OK, "compress2 failed: \(rc)")
        return Data(bytes: dst, count: Int(destLen))
    }

    /// Level-1 zlib streams, reused (stored events: one compression per ingested event).
    static let fastPool = ZStreamPool(
        scratchSize: 0,
        setUp: { z in
            deflateInit_(z, 1, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        }, reset: { deflateReset($0) }, end: { deflateEnd($0) })

    /// The same bytes compress2 at level 1 produces, on a pooled stream; nil if zlib failed.
    static func pooledCompress(_ data: Data) -> Data? {
        fastPool.with { s -> (Data?, clean: Bool) in
            var out = Data(count: Int(deflateBound(s.z, uLong(data.count))))
            let produced: Int? = out.withUnsafeMutableBytes { dst in
                data.withUnsafeBytes { src in
                    s.z.pointee.next_in = UnsafeMutablePointer(mutating: src.bindMemory(to: Bytef.self).baseAddress)
                    s.z.pointee.avail_in = uInt(src.count)
                    s.z.pointee.next_out = dst.bindMemory(to: Bytef.self).baseAddress
                    s.z.pointee.avail_out = uInt(dst.count)
                    guard CZlib.deflate(s.z, Z_FINISH) == Z_STREAM_END else { return nil }
                    return dst.count - Int(s.z.pointee.avail_out)
                }
            }
            guard let produced else { return (nil, false) }
            out.count = produced
            return (out, true)
        } ?? nil
    }

    /// gzip-format compression (SDK request bodies, the upload client's chunks); nil when zlib
    /// does not finish the stream.
    public static func gzip(_ data: Data, level: Int32 = 6) -> Data? {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound is enough for one Z_FINISH call; the margin covers the gzip trailer.
        var out = Data(count: Int(deflateBound(&stream, uLong(data.count))) + 32)
        let produced: Int? = out.withUnsafeMutableBytes { dst in
            data.withUnsafeBytes { src in
                stream.next_in = UnsafeMutablePointer(mutating: src.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(src.count)
                stream.next_out = dst.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(dst.count)
                guard CZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
                return dst.count - Int(stream.avail_out)
            }
        }
        guard let produced else { return nil }
        out.count = produced
        return out
    }
}
