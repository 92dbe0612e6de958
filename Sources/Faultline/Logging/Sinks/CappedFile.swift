// A file that never passes its cap: older lines give way to newer ones. Used by the file log and
// by the stderr capture. Not thread-safe: each owner serialises its own calls.
//
// Guarantee, also across processes appending to the same path through CappedFile:
// - every append holds the exclusive flock on `<path>.lock`, checks that the descriptor still
//   names `<path>` (reopening if a trim replaced it) and makes room first: when the batch would
//   take the file past the cap, the older lines go before the batch is written, so the file is
//   within its cap at every moment. A batch larger than the cap loses its oldest lines (cut at a
//   newline) before it is written;
// - the batch is one writev(2) on an O_APPEND descriptor. A short write (the disk filled up
//   mid-batch) is truncated away again, so a line is on disk whole or not at all and never glues
//   to the next one; a file that an older writer or a crash left without a final newline gets one
//   at open;
// - a trim reads only the part it keeps (from the first newline at or after the point where what
//   follows fits; that point itself if there is no newline), writes it to a temporary file in the
//   same directory and rename(2)s it over the log: a reader, or a kill -9 at any moment, sees the
//   old file or the new one (a leftover temporary is removed at next open);
// - when that copy cannot be written (ENOSPC: the disk is full) the trim compacts in place under
//   the same lock (moves the kept part to the front and truncates). That needs no free space, so
//   a full disk still leaves the newest lines within the cap; a reader sees it as a truncation,
//   and a kill -9 in its middle can leave one torn line at the seam. A write that fails with
//   ENOSPC while the file holds more than half its cap compacts to half and tries once more;
// - nothing is fsync'd: a power loss may lose recent lines (a process crash does not). The crash
//   handler appends the lines still queued without the lock (it may not take one): after a crash
//   the file may pass its cap by that much until the next open trims it.
import FaultlineProtocol
import Foundation
import FaultlineFiles

final class CappedFile: @unchecked Sendable {
    /// The smallest cap accepted: half of it is the longest line, and a line must hold its
    /// timestamp, level, source location and some message.
    static let smallestCap = 4096

    let path: String
    let cap: Int
    private(set) var fd: Int32 = -1
    private var lockFD: Int32 = -1
    private var inode: ino_t = 0
    /// Called with the new descriptor after a reopen (the crash-flush ring needs it).
    var onReopen: ((Int32) -> Void)?

    struct OpenError: Error, CustomStringConvertible { let description: String }

    init(path: String, cap: Int) throws(OpenError) {
        guard cap >= Self.smallestCap else {
            throw OpenError(description: "the cap of \(path) is \(cap) bytes; it must be at least \(Self.smallestCap)")
        }
        self.path = path
        self.cap = cap
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty {
            do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                throw OpenError(description: "cannot create \(dir): \(error.localizedDescription)")
            }
        }
        // Owner only: another user who could open it could hold the lock and stall the app's logging.
        lockFD = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw OpenError(description: "cannot open \(path).lock: \(String(cString: strerror(errno)))") }
        guard reopen() else {
            close(lockFD)
            throw OpenError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        removeAbandonedTemporaries()
        repairAtOpen()
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

    private func reopenIfReplaced() {
        var st = stat()
        if stat(path, &st) != 0 || st.st_ino != inode { reopen() }
    }

    private var currentSize: Int {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }

    /// The trim count gets its bytes while there is space (LogTrimCount). What an earlier run
    /// may have left: a file past the cap (a crash's final append, a larger
    /// cap before) is trimmed; a last line without its newline (a torn write) is ended.
    private func repairAtOpen() {
        guard lockExclusive() else { return }
        defer { lock(LOCK_UN) }
        LogTrimCount.prepare(lockFD: lockFD)
        let size = currentSize
        if size > cap { shrink(keepingAtMost: cap / 2) }
        let end = currentSize
        guard end > 0 else { return }
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return }
        defer { close(reader) }
        var last: UInt8 = 0
        if pread(reader, &last, 1, off_t(end - 1)) == 1 && last != 10 {
            var nl: UInt8 = 10
            _ = write(fd, &nl, 1)
        }
    }

    /// Appends the spans as one writev, after making room for them. Returns 0, or the errno of a
    /// failed or short write: then nothing of the batch is in the file.
    func append(_ spans: [UnsafeRawBufferPointer]) -> Int32 {
        let total = spans.reduce(0) { $0 + $1.count }
        guard total > 0 else { return 0 }
        guard lockExclusive() else { return EWOULDBLOCK }
        defer { lock(LOCK_UN) }
        reopenIfReplaced()
        if total > cap {
            // Only the newest lines of the batch can stay: as if written whole and then trimmed.
            var joined = [UInt8]()
            joined.reserveCapacity(total)
            for s in spans { joined.append(contentsOf: s) }
            let start = Self.newestPart(of: joined, fitting: cap)
            return joined.withUnsafeBytes { appendWithinCap([UnsafeRawBufferPointer(rebasing: $0[start...])]) }
        }
        return appendWithinCap(spans)
    }

    /// Caller holds the exclusive lock; the spans together are at most the cap.
    private func appendWithinCap(_ spans: [UnsafeRawBufferPointer]) -> Int32 {
        let total = spans.reduce(0) { $0 + $1.count }
        var size = currentSize
        if size + total > cap {
            shrink(keepingAtMost: min(cap / 2, cap - total))
            size = currentSize
        }
        var error = writeWhole(spans, total: total, at: size)
        if error == ENOSPC || error == EDQUOT, size > cap / 2 {
            // The disk is full: this file's older half makes way for the newer lines.
            shrink(keepingAtMost: min(cap / 2, cap - total))
            error = writeWhole(spans, total: total, at: currentSize)
        }
        return error
    }

    /// One writev at the end (`before`, the size now); a short write is truncated away again.
    /// Caller holds the exclusive lock.
    private func writeWhole(_ spans: [UnsafeRawBufferPointer], total: Int, at before: Int) -> Int32 {
        var iov = spans.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        let n = retryingOnInterrupt { writev(fd, &iov, Int32(iov.count)) }
        if n == total { return 0 }
        let error: Int32 = n < 0 ? errno : ENOSPC
        if n > 0 && ftruncate(fd, off_t(before)) != 0 {
            // Cannot take the torn part back: at least end it, so the next line starts whole.
            var nl: UInt8 = 10
            _ = write(fd, &nl, 1)
        }
        return error
    }

    /// Trims to the newer half now (see the file comment). Safe to call at any time.
    func trim() {
        guard lockExclusive() else { return }
        defer { lock(LOCK_UN) }
        reopenIfReplaced()
        if currentSize > cap { shrink(keepingAtMost: cap / 2) }
    }

    /// Keeps at most `keep` bytes of the newest whole lines: a copy renamed over the file, or,
    /// when the copy cannot be written, the same bytes moved to the front in place. Caller holds
    /// the exclusive lock.
    private func shrink(keepingAtMost keep: Int) {
        let src = open(path, O_RDONLY | O_CLOEXEC)
        guard src >= 0 else { return }
        defer { close(src) }
        var st = stat()
        fstat(src, &st)
        let size = Int(st.st_size)
        guard size > keep else { return }
        let cut = Self.cutOffset(fd: src, size: size, keep: keep)
        let temporary = path + ".trim.\(getpid()).tmp"
        let dst = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if dst >= 0 {
            var offset = off_t(cut)
            let ok = Self.copy(src, from: &offset, to: dst, at: nil, count: size - cut)
            fchmod(dst, st.st_mode & 0o7777)
            close(dst)
            if ok && rename(temporary, path) == 0 {
                reopen()
                LogTrimCount.increment(lockFD: lockFD)
                return
            }
            unlink(temporary)
        }
        compactInPlace(cut: cut, size: size)
    }

    /// Moves bytes `cut..<size` to the front and truncates: needs no free space.
    private func compactInPlace(cut: Int, size: Int) {
        let rw = open(path, O_RDWR | O_CLOEXEC)
        guard rw >= 0 else { return }
        defer { close(rw) }
        // Counted before any byte moves: a reader whose read overlaps the move sees the count
        // change after it and reads again (LogFollower).
        LogTrimCount.increment(lockFD: lockFD)
        var from = off_t(cut)
        var to: off_t = 0
        // A copy that fails mid-way (an I/O error) would end in a torn line: then nothing is kept.
        let moved = Self.copy(rw, from: &from, to: rw, at: &to, count: size - cut)
        ftruncate(rw, moved ? to : 0)
    }

    /// The first byte after the first newline at or past the point from which `keep` bytes
    /// remain, reading forward in 4 KiB steps (nothing before that point is read). Without a
    /// newline there (a stderr stream without newlines) the point itself.
    static func cutOffset(fd: Int32, size: Int, keep: Int) -> Int {
        let from = max(0, size - keep)
        guard from > 0 else { return 0 }
        var at = from - 1  // a newline just before the point makes the point itself a line start
        var chunk = [UInt8](repeating: 0, count: 4096)
        while at < size {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 4096, off_t(at)) }
            if n <= 0 { break }
            if let i = chunk[0..<n].firstIndex(of: 10) { return at + i + 1 }
            at += n
        }
        return from
    }

    /// Where the newest part of `bytes` that fits in `room` begins: after a newline when there
    /// is one in the way, else just where it fits.
    static func newestPart(of bytes: [UInt8], fitting room: Int) -> Int {
        let from = max(0, bytes.count - room)
        guard from > 0 else { return 0 }
        if bytes[from - 1] == 10 { return from }
        return bytes[from...].firstIndex(of: 10).map { $0 + 1 } ?? from
    }

    /// Copies `count` bytes from `src` at `from`; to `dst` at `at` (nil: at its current offset).
    private static func copy(_ src: Int32, from: inout off_t, to dst: Int32, at: UnsafeMutablePointer<off_t>?, count: Int) -> Bool {
        var left = count
        var buf = [UInt8](repeating: 0, count: 65536)
        while left > 0 {
            let n = buf.withUnsafeMutableBytes { pread(src, $0.baseAddress, min(65536, left), from) }
            if n <= 0 { return false }
            let w = buf.withUnsafeBytes { b -> Int in
                if let at { return pwrite(dst, b.baseAddress, n, at.pointee) }
                return write(dst, b.baseAddress, n)
            }
            if w != n { return false }
            from += off_t(n)
            at?.pointee += off_t(n)
            left -= n
        }
        return true
    }

    private func lock(_ op: Int32) { _ = retryingOnInterrupt { flock(lockFD, op) } }

    /// The exclusive lock, waited for at most `lockWaitSeconds`: other writers hold it for a
    /// write or a trim (milliseconds), but a reader holding its shared lock could be stopped
    /// (`faultline console` suspended with Ctrl-Z): the app's logging then drops and counts
    /// lines (EWOULDBLOCK) instead of hanging with it.
    private func lockExclusive() -> Bool {
        let deadline = Date().addingTimeInterval(Self.lockWaitSeconds)
        var pause: UInt32 = 200
        while true {
            if retryingOnInterrupt({ flock(lockFD, LOCK_EX | LOCK_NB) }) == 0 { return true }
            if errno != EWOULDBLOCK { return false }
            if Date() >= deadline { return false }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }
    static let lockWaitSeconds: Double = 1

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
