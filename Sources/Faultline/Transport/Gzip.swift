// gzip via zlib (deflateInit2 with a gzip wrapper), for request bodies.
import CZlib
import Foundation

enum Gzip {
    static func compress(_ data: Data, level: Int32 = 6) -> Data? {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var out = Data(count: Int(deflateBound(&stream, UInt(data.count))) + 32)
        let produced: Int? = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int? in
            out.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) -> Int? in
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = output.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(output.count)
                guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
                return Int(stream.total_out)
            }
        }
        guard let n = produced else { return nil }
        out.count = n
        return out
    }
}
