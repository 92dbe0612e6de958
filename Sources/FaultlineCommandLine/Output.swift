// Writing whole buffers to stdout and stderr by file descriptor: stdout's global is not
// concurrency-safe in Swift 6, and FileHandle is not in FoundationEssentials.
import Glibc

/// Writes all of `bytes` to a file descriptor (retrying on EINTR); false at any other error
/// (a full disk, a closed pipe with SIGPIPE ignored): a caller that would then delete the
/// source of what it printed must not.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { writeAll(fd, $0) }
}

@discardableResult
public func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Bool {
    var off = 0
    while off < buf.count {
        let n = write(fd, buf.baseAddress! + off, buf.count - off)
        if n < 0 { if errno == EINTR { continue }; return false }
        off += n
    }
    return true
}

/// The message for a failed write to standard output, with errno's reason.
public func standardOutputError() -> String {
    "cannot write to standard output: " + String(cString: strerror(errno))
}

/// Everything on a file descriptor up to its end (stdin for `symbolicate` without arguments);
/// what was read before an error other than EINTR.
public func readToEnd(_ fd: Int32) -> [UInt8] {
    var out = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return out }
        if n == 0 { return out }
        out.append(contentsOf: chunk[0..<n])
    }
}
