// How many times a capped file (the file log, the stderr capture) was trimmed, kept in its
// `<path>.lock` file: the SDK counts each trim there under the exclusive lock, and `faultline
// console` reads it to tell a trimmed file from one deleted and created anew.
//
// Layout: the lock file's first 8 bytes, a little-endian UInt64 (an empty file is 0). The lock
// is taken with flock(2), which never looks at the content.
import Glibc

public enum LogTrimCount {
    /// The lock file beside a capped file.
    public static func lockPath(of path: String) -> String { path + ".lock" }

    /// Gives a new lock file its count (0) while there is space, so a later count on a full
    /// disk overwrites bytes already allocated. Caller holds the exclusive flock on `lockFD`.
    public static func prepare(lockFD: Int32) {
        var st = stat()
        guard fstat(lockFD, &st) == 0, st.st_size < 8 else { return }
        var zero = UInt64(0)
        _ = withUnsafeBytes(of: &zero) { pwrite(lockFD, $0.baseAddress, 8, 0) }
    }

    /// Adds one trim. Caller holds the exclusive flock on `lockFD` (opened read-write). On a full
    /// disk without `prepare` the count may not be written: then a reader sees no trim.
    public static func increment(lockFD: Int32) {
        let next = read(fd: lockFD) &+ 1
        var bytes = next.littleEndian
        _ = withUnsafeBytes(of: &bytes) { pwrite(lockFD, $0.baseAddress, 8, 0) }
    }

    /// The count in the lock file of `path`'s capped file; 0 when there is none.
    public static func read(forFile path: String) -> UInt64 {
        let fd = open(lockPath(of: path), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return read(fd: fd)
    }

    private static func read(fd: Int32) -> UInt64 {
        var value: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &value) { pread(fd, $0.baseAddress, 8, 0) }
        return n == 8 ? UInt64(littleEndian: value) : 0
    }
}
