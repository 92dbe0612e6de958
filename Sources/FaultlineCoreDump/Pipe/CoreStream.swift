// The core as the kernel pipes it to a core_pattern handler: read forward only, a chunk at a
// time, never past a deadline; every byte read is also handed to the kept copy when there is one.
import FoundationEssentials
import FaultlineFiles
import Glibc

final class CoreStream {
    private let fd: Int32
    private let deadline: ContinuousClock.Instant
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private(set) var position: UInt64 = 0
    private(set) var atEnd = false
    private(set) var timedOut = false
    /// Sees every chunk read from the pipe, in order (`KeptCore`).
    var tee: ((UnsafeRawBufferPointer) -> Void)?

    init(fd: Int32, deadline: ContinuousClock.Instant, chunkSize: Int = 1 << 20) {
        self.fd = fd
        self.deadline = deadline
        buffer = [UInt8](repeating: 0, count: chunkSize)
    }

    /// Exactly `count` bytes, or nil at the end of the input or the deadline.
    func read(_ count: Int) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        let done = forward(UInt64(count)) { out.append(contentsOf: $0) }
        return done ? out : nil
    }

    /// Hands the next `count` bytes to `sink` in chunks; false when the input ended or the
    /// deadline passed first (what was read is handed on all the same).
    func forward(_ count: UInt64, to sink: (UnsafeRawBufferPointer) -> Void) -> Bool {
        var left = count
        while left > 0 {
            if start == end, !fill() { return false }
            let n = Int(min(UInt64(end - start), left))
            buffer.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[start..<start + n])) }
            start += n
            position += UInt64(n)
            left -= UInt64(n)
        }
        return true
    }

    /// Reads and drops everything up to the end of the input (for the kept copy); false at the deadline.
    func drain() -> Bool {
        while fill() {
            position += UInt64(end - start)
            start = end
        }
        return atEnd
    }

    private func fill() -> Bool {
        guard !atEnd, !timedOut else { return false }
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { timedOut = true; return false }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = retryingOnInterrupt { poll(&p, 1, ms) }
            if ready < 0 { atEnd = true; return false }
            if ready == 0 { continue }
            let n = retryingOnInterrupt { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) } }
            if n < 0 && errno == EAGAIN { continue }
            guard n > 0 else { atEnd = true; return false }
            start = 0
            end = n
            if let tee { buffer.withUnsafeBytes { tee(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } }
            return true
        }
    }
}
