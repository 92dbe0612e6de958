// Bounded inflation (zlib, gzip or raw deflate) of request bodies, chunks and stored events: a gzip
// bomb stops at the cap while it inflates, it is never inflated whole.
import FoundationEssentials
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
    public static func inflate(
        _ data: Data, limit: Int, format: Format = .gzipOrZlib,
        sink: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws -> Int {
        let pool = format == .raw ? rawPool : wrappedPool
        let result: Result<Int, Error>? = pool.with { s in
            do { return (.success(try inflate(data, limit: limit, format: format, stream: s, sink: sink)), true) } catch { return (.failure(error), false) }
        }
        guard let result else { throw Failure.corrupt("inflateInit failed") }
        return try result.get()
    }

    /// gzip-or-zlib and raw-deflate streams, reused (one inflation per ingested request).
    static let wrappedPool = pool(windowBits: 15 + 32)
    static let rawPool = pool(windowBits: -15)
    private static func pool(windowBits: Int32) -> ZStreamPool {
        ZStreamPool(
            scratchSize: 32 * 1024,
            setUp: { z in
                inflateInit2_(z, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
            }, reset: { inflateReset($0) }, end: { inflateEnd($0) })
    }

    private static func inflate(
        _ data: Data, limit: Int, format: Format, stream s: ZStreamPool.Stream,
        sink: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws -> Int {
        let stream = s.z
        // Uninitialised scratch, kept with the stream: zero-filling a buffer per call showed up in ingest profiles.
        let scratchSize = s.scratchSize
        let scratch = s.scratch
        var total = 0
        try data.withUnsafeBytes { (input: UnsafeRawBufferPointer) throws -> Void in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: UInt8.self).baseAddress)
            stream.pointee.avail_in = uInt(input.count)
            while true {
                stream.pointee.next_out = scratch
                stream.pointee.avail_out = uInt(scratchSize)
                let rc = CZlib.inflate(stream, Z_NO_FLUSH)
                let produced = scratchSize - Int(stream.pointee.avail_out)
                if produced > 0 {
                    if total + produced > limit { throw Failure.tooLarge(limit: limit) }
                    total += produced
                    try sink(UnsafeBufferPointer(start: scratch, count: produced))
                }
                if rc == Z_STREAM_END {
                    // Concatenated gzip members are legal; continue if more input remains.
                    if stream.pointee.avail_in > 0 && format == .gzipOrZlib {
                        if inflateReset(stream) != Z_OK { throw Failure.corrupt("reset failed") }
                        continue
                    }
                    return
                }
                if rc == Z_BUF_ERROR && stream.pointee.avail_in == 0 { throw Failure.corrupt("truncated stream") }
                if rc != Z_OK {
                    throw Failure.corrupt(stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)")
                }
            }
        }
        return total
    }

    /// `Content-Encoding: deflate` is zlib-wrapped by the RFC but raw in some clients: accept both.
    public static func inflateHTTPDeflate(_ data: Data, limit: Int) throws(Failure) -> Data {
        do { return try inflate(data, limit: limit, format: .gzipOrZlib) } catch .tooLarge(let l) { throw .tooLarge(limit: l) } catch {
            return try inflate(data, limit: limit, format: .raw)
        }
    }
}
