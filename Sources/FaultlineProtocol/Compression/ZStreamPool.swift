// Reused zlib streams for the per-event hot paths (inflating request bodies, compressing stored
// events): deflateInit allocates and sets up about 256 KiB and inflateInit a 32 KiB window, which
// per 14 KB event cost more than the compression itself. A stream is reset, not re-initialised,
// between uses; a stream whose last use failed is ended, not reused.
import FoundationEssentials
import CZlib
import Synchronization

final class ZStreamPool: @unchecked Sendable {
    /// One pooled stream with its scratch buffer (inflate's output window). Unchecked: the pool
    /// hands a stream to one caller at a time.
    final class Stream: @unchecked Sendable {
        let z = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        let scratch: UnsafeMutablePointer<UInt8>
        let scratchSize: Int
        init(scratchSize: Int) {
            z.initialize(to: z_stream())
            self.scratchSize = scratchSize
            scratch = .allocate(capacity: max(1, scratchSize))
        }
        deinit { z.deallocate(); scratch.deallocate() }
    }

    private let free = Mutex<[Stream]>([])
    /// Streams kept between uses (about one per HTTP worker thread); more are ended after use.
    private let keep: Int
    private let setUp: (UnsafeMutablePointer<z_stream>) -> Bool
    private let reset: (UnsafeMutablePointer<z_stream>) -> Int32
    private let end: (UnsafeMutablePointer<z_stream>) -> Int32
    private let scratchSize: Int

    init(
        keep: Int = 16, scratchSize: Int, setUp: @escaping (UnsafeMutablePointer<z_stream>) -> Bool,
        reset: @escaping (UnsafeMutablePointer<z_stream>) -> Int32, end: @escaping (UnsafeMutablePointer<z_stream>) -> Int32
    ) {
        self.keep = keep
        self.scratchSize = scratchSize
        self.setUp = setUp
        self.reset = reset
        self.end = end
    }

    /// Runs `body` with a ready stream; `body` returns whether the stream ended cleanly (then it is
    /// reset and kept). Nil when zlib could not set a stream up (out of memory).
    func with<T>(_ body: (Stream) throws -> (T, clean: Bool)) rethrows -> T? {
        var s = free.withLock { $0.popLast() }
        if s == nil {
            let fresh = Stream(scratchSize: scratchSize)
            guard setUp(fresh.z) else { return nil }
            s = fresh
        }
        let stream = s!
        var clean = false
        defer {
            if clean && reset(stream.z) == Z_OK {
                let kept = free.withLock { free in
                    guard free.count < keep else { return false }
                    free.append(stream)
                    return true
                }
                if !kept { _ = end(stream.z) }
            } else {
                _ = end(stream.z)
            }
        }
        let (value, ok) = try body(stream)
        clean = ok
        return value
    }
}
