// Bounded brotli decoding of request bodies (`Content-Encoding: br`), the same rules as Inflate's:
// streamed a piece at a time into the caller's sink, stopped at the cap while decoding (a 49 KB
// bomb never becomes gigabytes), a truncated or corrupt stream refused. libbrotlidec does the work.
import CBrotli
import FaultlineProtocol
import Foundation

enum BrotliDecoder {
    static let pieceSize = 32 * 1024

    /// Decodes `data`, handing each decoded piece (at most 32 KiB) to `sink`; throws
    /// `Inflate.Failure.tooLarge` as soon as the output would pass `limit` bytes, `.corrupt` for a
    /// bad or truncated stream, and whatever `sink` throws. Returns the bytes produced.
    @discardableResult
    static func decode(_ data: Data, limit: Int, sink: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Int {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { throw Inflate.Failure.corrupt("brotli decoder could not be created") }
        defer { BrotliDecoderDestroyInstance(state) }
        var piece = [UInt8](repeating: 0, count: pieceSize)
        var total = 0
        return try data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int in
            var nextIn = input.bindMemory(to: UInt8.self).baseAddress
            var availableIn = input.count
            while true {
                var availableOut = pieceSize
                let (result, produced): (BrotliDecoderResult, Int) = piece.withUnsafeMutableBufferPointer { out in
                    var nextOut = out.baseAddress
                    let r = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    return (r, pieceSize - availableOut)
                }
                if produced > 0 {
                    guard total + produced <= limit else { throw Inflate.Failure.tooLarge(limit: limit) }
                    total += produced
                    try piece.withUnsafeBufferPointer { try sink(UnsafeBufferPointer(rebasing: $0[0..<produced])) }
                }
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    guard availableIn == 0 else { throw Inflate.Failure.corrupt("bytes after the end of the brotli stream") }
                    return total
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    throw Inflate.Failure.corrupt("the brotli stream ends early")
                default:
                    let code = BrotliDecoderGetErrorCode(state)
                    throw Inflate.Failure.corrupt(String(cString: BrotliDecoderErrorString(code)))
                }
            }
        }
    }

    /// The whole output, at most `limit` bytes.
    static func decode(_ data: Data, limit: Int) throws(Inflate.Failure) -> Data {
        var out = Data()
        do { try decode(data, limit: limit) { out.append($0.baseAddress!, count: $0.count) } } catch let e as Inflate.Failure { throw e } catch {
            throw .corrupt("\(error)")
        }
        return out
    }
}
