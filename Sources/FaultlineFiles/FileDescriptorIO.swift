// Whole reads and writes on a file descriptor: the one EINTR and short-write loop the SDK, the CLI
// and the server share (stdout's global is not concurrency-safe in Swift 6, and FileHandle is not
// in FoundationEssentials).
import Glibc

/// Writes all of `bytes` to a file descriptor (retrying on EINTR and after short writes); false
/// at any other error (a full disk, a closed pipe with SIGPIPE ignored): a caller that would then
/// delete the source of what it wrote must not.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { writeAll(fd, $0) }
}

@discardableResult
public func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Bool {
    var off = 0
    while off < buf.count {
        let n = write(fd, buf.baseAddress! + off, buf.count - off)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        off += n
    }
    return true
}

/// Everything on a file descriptor up to its end; what was read before an error other than EINTR.
public func readToEnd(_ fd: Int32) -> [UInt8] {
    var out = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return out
        }
        if n == 0 { return out }
        out.append(contentsOf: chunk[0..<n])
    }
}
