// One `faultline serve` per SQLite data directory. A second server on the same files would run
// its own grouping, retention and checkpoints beside the first, each sure it is the only writer
// (the single SQLite writer, the WAL-coalescing VFS, the grouping queue's claim are all per
// process). The lock is an exclusive flock on `serve.lock` in the directory: the kernel lets it go
// when the process ends however it ends (kill -9 included), so a stale lock never blocks a start.
// Commands that read or administer the directory (`projects`, `issues`, `alerts`) do not take it.
import FaultlineFiles
import Foundation

public final class DataDirectoryLock: @unchecked Sendable {
    public struct Held: Error, CustomStringConvertible {
        public let directory: String
        public let holder: String?
        public var description: String {
            let who = holder.map { " (process \($0))" } ?? ""
            return "another faultline serve uses \(directory)\(who); stop it first, or give this one its own --data-dir"
        }
    }

    private let descriptor: Int32
    public let path: String

    /// Takes the lock, or throws `Held` (naming the holder's process id when it wrote one) or the
    /// error that kept the lock file from opening.
    public init(dataDirectory: String) throws {
        path = dataDirectory + "/serve.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError.errno("open \(path)") }
        if retryingOnInterrupt({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            let code = errno
            let holder = Self.readHolder(fd)
            close(fd)
            if code == EWOULDBLOCK { throw Held(directory: dataDirectory, holder: holder) }
            throw POSIXError(operation: "flock \(path)", code: code)
        }
        descriptor = fd
        // Who holds it, for the next one's message; the lock itself is the flock, not this text.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit { close(descriptor) }

    private static func readHolder(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty || !text.allSatisfy(\.isNumber) ? nil : text
    }
}
