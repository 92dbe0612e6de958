// A fixed output buffer for address mode: bytes go straight out, no String per frame.

/// A buffer handed to a writer when full (appending is a store and an increment), or, made with
/// `init(holding:)`, one that grows to hold a whole chunk of text until `handOver` (the same
/// memory is reused for the next chunk, so its pages are faulted in once).
struct OutputBuffer: ~Copyable {
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    private let write: ((UnsafeRawBufferPointer) -> Void)?

    init(write: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.write = write
        capacity = 256 * 1024
        buffer = .allocate(capacity: capacity)
    }

    /// A buffer that keeps everything appended (growing past `bytes`) until `handOver`.
    init(holding bytes: Int) {
        write = nil
        capacity = max(bytes, 4096)
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if count == capacity { makeRoom(1) }
        buffer[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count > capacity - count {
            if let write, bytes.count > capacity {
                flush()
                write(bytes)
                return
            }
            makeRoom(bytes.count)
        }
        if let p = bytes.baseAddress { (buffer + count).update(from: p.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        count += bytes.count
    }

    /// Writes what is buffered (a holding buffer keeps it: it has no writer).
    mutating func flush() {
        guard let write else { return }
        if count > 0 { write(UnsafeRawBufferPointer(start: buffer, count: count)) }
        count = 0
    }

    /// Hands the held bytes to `body` and empties the buffer, keeping its memory.
    mutating func handOver(_ body: (UnsafeRawBufferPointer) -> Void) {
        if count > 0 { body(UnsafeRawBufferPointer(start: buffer, count: count)) }
        count = 0
    }

    /// Room for `needed` more bytes: a writing buffer flushes, a holding one doubles.
    private mutating func makeRoom(_ needed: Int) {
        if write != nil {
            flush()
            return
        }
        var grown = capacity * 2
        while grown - count < needed { grown *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        bigger.update(from: buffer, count: count)
        buffer.deallocate()
        buffer = bigger
        capacity = grown
    }
}
