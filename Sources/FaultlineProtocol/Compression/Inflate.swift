// Bounded inflation (zlib, gzip or raw deflate) of request bodies, chunks and stored events: a gzip
// bomb stops at the cap while it inflates, it is never inflated whole.
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
