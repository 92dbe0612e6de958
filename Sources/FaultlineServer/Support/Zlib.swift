// zlib: bounded inflation of request bodies and chunks (a gzip bomb stops at the cap while it
// inflates, it is never inflated whole), and cheap compression of stored events.
import Foundation
import CZlib

public enum Inflate {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLarge(limit: Int)
        case corrupt(String)
        public var description: String {
            switch self {
            case .tooLarge(let l): return "decompressed body exceeds \(l) bytes"
            case .corrupt(let m): return "compressed body is corrupt: \(m)"
            }
        }
    }

    public enum Format { case gzipOrZlib, raw }

    /// Inflates `data`, failing as soon as the output would exceed `limit` bytes.
    public static func inflate(_ data: Data, limit: Int, format: Format = .gzipOrZlib) throws(Failure) -> Data {
        var out = Data()
        out.reserveCapacity(min(limit, max(4096, data.count * 4)))
        do {
            try inflate(data, limit: limit, format: format) { out.append($0.baseAddress!, count: $0.count) }
        } catch let e as Failure { throw e } catch { throw .corrupt("\(error)") }
        return out
    }

    /// Streaming form: hands each inflated piece (at most 32 KiB) to `sink` as it is produced, so
    /// a caller that frames as it goes never holds the whole output. Stops at `limit` bytes in
    /// total, and as soon as `sink` throws (its error is rethrown). Returns the bytes produced.
    @discardableResult
    public static func inflate(_ data: Data, limit: Int, format: Format = .gzipOrZlib,
                               sink: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Int {
        var stream = z_stream()
        let windowBits: Int32 = format == .raw ? -15 : 15 + 32
        guard inflateInit2_(&stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure.corrupt("inflateInit failed")
        }
        defer { inflateEnd(&stream) }
        // Uninitialised scratch: zero-filling a buffer per call showed up in ingest profiles.
        let scratchSize = 32 * 1024
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        var total = 0
        try data.withUnsafeBytes { (input: UnsafeRawBufferPointer) throws -> Void in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: UInt8.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                stream.next_out = scratch
                stream.avail_out = uInt(scratchSize)
                let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
                let produced = scratchSize - Int(stream.avail_out)
                if produced > 0 {
                    if total + produced > limit { throw Failure.tooLarge(limit: limit) }
                    total += produced
                    try sink(UnsafeBufferPointer(start: scratch, count: produced))
                }
                if rc == Z_STREAM_END {
                    // Concatenated gzip members are legal; continue if more input remains.
                    if stream.avail_in > 0 && format == .gzipOrZlib {
                        if inflateReset(&stream) != Z_OK { throw Failure.corrupt("reset failed") }
                        continue
                    }
                    return
                }
                if rc == Z_BUF_ERROR && stream.avail_in == 0 { throw Failure.corrupt("truncated stream") }
                if rc != Z_OK {
                    throw Failure.corrupt(stream.msg.map { String(cString: $0) } ?? "zlib error \(rc)")
                }
            }
        }
        return total
    }

    /// `Content-Encoding: deflate` is zlib-wrapped by the RFC but raw in some clients: accept both.
    public static func inflateHTTPDeflate(_ data: Data, limit: Int) throws(Failure) -> Data {
        do { return try inflate(data, limit: limit, format: .gzipOrZlib) }
        catch .tooLarge(let l) { throw .tooLarge(limit: l) }
        catch { return try inflate(data, limit: limit, format: .raw) }
    }
}

public enum Deflate {
    /// zlib-format compression at `level` (1 = fastest), used for stored raw events.
    public static func compress(_ data: Data, level: Int32 = 1) -> Data {
        var destLen = compressBound(uLong(data.count))
        let dst = UnsafeMutablePointer<Bytef>.allocate(capacity: Int(destLen))
        defer { dst.deallocate() }
        let rc = data.withUnsafeBytes { src in
            compress2(dst, &destLen, src.bindMemory(to: Bytef.self).baseAddress, uLong(data.count), level)
        }
        precondition(rc == Z_OK, "compress2 failed: \(rc)")
        return Data(bytes: dst, count: Int(destLen))
    }

    /// gzip-format compression (the upload client's chunks).
    public static func gzip(_ data: Data, level: Int32 = 6) -> Data {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return Data()
        }
        defer { deflateEnd(&stream) }
        var out = Data(count: Int(deflateBound(&stream, uLong(data.count))) + 32)
        let produced: Int = out.withUnsafeMutableBytes { dst in
            data.withUnsafeBytes { src in
                stream.next_in = UnsafeMutablePointer(mutating: src.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(src.count)
                stream.next_out = dst.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(dst.count)
                _ = CZlib.deflate(&stream, Z_FINISH)
                return dst.count - Int(stream.avail_out)
            }
        }
        out.count = produced
        return out
    }
}
