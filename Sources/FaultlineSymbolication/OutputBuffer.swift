// A fixed output buffer for address mode: bytes go straight out, no String per frame.

/// A fixed buffer handed to a writer when full: appending is a store and an increment.
struct OutputBuffer: ~Copyable {
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity = 256 * 1024
    private var count = 0
    private let write: (UnsafeRawBufferPointer) -> Void

    init(write: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.write = write
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if count == capacity { flush() }
        buffer[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count > capacity - count {
            flush()
            if bytes.count > capacity { write(bytes); return }
        }
        if let p = bytes.baseAddress { (buffer + count).update(from: p.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        count += bytes.count
    }

    mutating func flush() {
        if count > 0 { write(UnsafeRawBufferPointer(start: buffer, count: count)) }
        count = 0
    }
}
