// A file that keeps only its newer half when it passes a cap. Used by the file log and by the
// stderr capture. Not thread-safe: each owner serialises its own calls.
//
// Guarantee, also across processes appending to the same path through CappedFile:
// - every append is one writev(2) on an O_APPEND descriptor, made while holding a shared flock
//   on `<path>.lock` after checking that the descriptor still names `<path>` (reopening if a
//   trim replaced it). A batch of whole lines therefore lands whole and never in a replaced file;
// - a trim holds the exclusive flock, reads only the part it keeps (from the first newline after
//   the midpoint; the midpoint itself if there is no newline), writes it to a temporary file in
//   the same directory and rename(2)s it over the log: a reader, or a kill -9 at any moment, sees
//   the old file or the new one, never a torn one (a leftover temporary is removed at next open);
// - nothing is fsync'd: a power loss may lose recent lines (a process crash does not).
import Foundation

final class CappedFile: @unchecked Sendable {
    let path: String
    let cap: Int
    private(set) var fd: Int32 = -1
    private var lockFD: Int32 = -1
    private var inode: ino_t = 0
    /// Called with the new descriptor after a reopen (the crash-flush ring needs it).
    var onReopen: ((Int32) -> Void)?

    struct OpenError: Error, CustomStringConvertible { let description: String }

    init(path: String, cap: Int) throws(OpenError) {
        self.path = path
        self.cap = max(cap, 4096)
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty {
            do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                throw OpenError(description: "cannot create \(dir): \(error.localizedDescription)")
            }
        }
        lockFD = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw OpenError(description: "cannot open \(path).lock: \(String(cString: strerror(errno)))") }
        guard reopen() else {
            close(lockFD)
            throw OpenError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        removeAbandonedTemporaries()
    }

    deinit {
        if fd >= 0 { close(fd) }
        if lockFD >= 0 { close(lockFD) }
    }

    @discardableResult
    private func reopen() -> Bool {
        let n = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard n >= 0 else { return false }
        var st = stat()
        fstat(n, &st)
        let old = fd
        fd = n
        inode = st.st_ino
        onReopen?(n)
        if old >= 0 { close(old) }
        return true
    }

    /// Appends the spans with one writev. Returns 0 or the errno of a failed or short write.
    /// Trims afterwards when the file passed the cap.
    func append(_ spans: [UnsafeRawBufferPointer]) -> Int32 {
        let total = spans.reduce(0) { $0 + $1.count }
        guard total > 0 else { return 0 }
        lock(LOCK_SH)
        var st = stat()
        if stat(path, &st) != 0 || st.st_ino != inode { reopen() }
        var iov = spans.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var n: Int
        repeat { n = writev(fd, &iov, Int32(iov.count)) } while n < 0 && errno == EINTR
        let error: Int32 = n < 0 ? errno : (n < total ? ENOSPC : 0)
        if n > 0 && n < total {
            // A short write (the disk filled up mid-line): end the torn line so the next one parses.
            var nl: UInt8 = 10
            _ = write(fd, &nl, 1)
        }
        var size = stat()
        fstat(fd, &size)
        lock(LOCK_UN)
        if Int(size.st_size) > cap { trim() }
        return error
    }

    /// Keeps the newer half (see the file comment). Safe to call at any time.
    func trim() {
        lock(LOCK_EX)
        defer { lock(LOCK_UN) }
        let src = open(path, O_RDONLY | O_CLOEXEC)
        guard src >= 0 else { return }
        defer { close(src) }
        var st = stat()
        fstat(src, &st)
        let size = Int(st.st_size)
        guard size > cap else { reopenIfReplaced(); return }  // another process trimmed already
        let cut = Self.cutOffset(fd: src, size: size, keep: cap / 2)
        let temporary = path + ".trim.\(getpid()).tmp"
        let dst = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard dst >= 0 else { return }
        var offset = off_t(cut)
        let ok = Self.copyByHand(src, &offset, dst, size - cut)
        fchmod(dst, st.st_mode & 0o7777)
        close(dst)
        guard ok, rename(temporary, path) == 0 else { unlink(temporary); return }
        reopen()
    }

    private func reopenIfReplaced() {
        var st = stat()
        if stat(path, &st) != 0 || st.st_ino != inode { reopen() }
    }

    /// The first byte after the first newline at or past the midpoint, reading forward from the
    /// midpoint in 4 KiB steps (nothing before the midpoint is read). The "midpoint" is where at
    /// most half the cap remains, so one large batch past the cap still ends below it.
    static func cutOffset(fd: Int32, size: Int, keep: Int) -> Int {
        let mid = max(size / 2, size - keep)
        var at = mid
        var chunk = [UInt8](repeating: 0, count: 4096)
        while at < size {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 4096, off_t(at)) }
            if n <= 0 { break }
            if let i = chunk[0..<n].firstIndex(of: 10) { return at + i + 1 }
            at += n
        }
        return mid  // no newline after the midpoint: cut there (a stderr stream without newlines)
    }

    private static func copyByHand(_ src: Int32, _ offset: inout off_t, _ dst: Int32, _ remaining: Int) -> Bool {
        var left = remaining
        var buf = [UInt8](repeating: 0, count: 65536)
        while left > 0 {
            let n = buf.withUnsafeMutableBytes { pread(src, $0.baseAddress, min(65536, left), offset) }
            if n <= 0 { return false }
            let w = buf.withUnsafeBytes { write(dst, $0.baseAddress, n) }
            if w != n { return false }
            offset += off_t(n); left -= n
        }
        return true
    }

    private func lock(_ op: Int32) { while flock(lockFD, op) != 0 && errno == EINTR {} }

    /// Temporaries of trims whose process died (kill -9 mid-trim).
    private func removeAbandonedTemporaries() {
        let dir = (path as NSString).deletingLastPathComponent
        let base = (path as NSString).lastPathComponent + ".trim."
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? [] where name.hasPrefix(base) && name.hasSuffix(".tmp") {
            let pid = Int32(name.dropFirst(base.count).dropLast(4)) ?? 0
            if pid > 0 && pid != getpid() && (kill(pid, 0) == 0 || errno == EPERM) { continue }
            unlink((dir.isEmpty ? "." : dir) + "/" + name)
        }
    }
}
