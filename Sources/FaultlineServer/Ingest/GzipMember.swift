// The usual ingest body — one gzip member of an event's size — decoded whole by libdeflate, which
// decodes a whole buffer faster than zlib's streaming inflate (docs/SERVER.md). It needs the output's size
// up front, which a gzip member states in its trailer (ISIZE); that is the client's word, so it is
// only believed within bounds, and libdeflate checks it against what it decodes. Everything else —
// zlib or raw deflate, concatenated members, a stated size over the bounds, a size that lies, a
// corrupt stream — returns nil here and goes the streaming way (`Inflate`), which stops at the cap
// while it inflates and gives the refusal its reason.
import CLibDeflate
import FaultlineProtocol
import FaultlineThreads
import Foundation

enum GzipMember {
    /// Members that say they inflate to more than this are streamed (not allocated whole).
    static let wholeUpTo = 1 << 20
    /// DEFLATE cannot expand a stream more than about 1032:1, so a member stating more than
    /// this many times its own size lies.
    static let maxRatio = 1032

    /// The inflated bytes, or nil when `body` is not one gzip member of at most `limit` (and
    /// `wholeUpTo`) bytes that libdeflate decoded: the caller then streams it.
    static func inflated(_ body: Data, limit: Int) -> [UInt8]? {
        let n = body.count
        guard n >= 18, body[body.startIndex] == 0x1f, body[body.startIndex + 1] == 0x8b else { return nil }
        let trailer = body.index(body.endIndex, offsetBy: -4)
        let stated = (0..<4).reduce(0) { $0 | Int(body[trailer + $1]) << (8 * $1) }
        guard stated > 0, stated <= min(limit, wholeUpTo), stated <= n * maxRatio else { return nil }
        guard let d = decompressors.value.pointer() else { return nil }
        var ok = false
        let out = [UInt8](unsafeUninitializedCapacity: stated) { buffer, initialized in
            var consumed = 0
            var produced = 0
            let result = body.withUnsafeBytes { input in
                libdeflate_gzip_decompress_ex(d, input.baseAddress, n, buffer.baseAddress, stated, &consumed, &produced)
            }
            ok = result == LIBDEFLATE_SUCCESS && consumed == n && produced == stated
            initialized = ok ? produced : 0
        }
        return ok ? out : nil
    }

    /// libdeflate's decompressors hold no stream state between calls but are not to be shared
    /// by two threads at once: each connection thread keeps one (a pool under one lock made the
    /// threads sleep on it when they met), made at its first gzip body and freed when the thread
    /// ends — with a thread per connection, once per connection, which is cheap beside the thread.
    static let decompressors = PerThread { Decompressor() }

    /// A thread's libdeflate decompressor, freed with its owner.
    final class Decompressor {
        private var allocated: OpaquePointer?
        /// The decompressor, allocated at the first call (and again after a failed allocation);
        /// nil when libdeflate could not allocate it (the caller then streams).
        func pointer() -> OpaquePointer? {
            if allocated == nil { allocated = libdeflate_alloc_decompressor() }
            return allocated
        }
        deinit { if let allocated { libdeflate_free_decompressor(allocated) } }
    }
}
