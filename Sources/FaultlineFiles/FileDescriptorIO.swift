// Whole reads and writes on a file descriptor: the one short-write loop the SDK, the CLI
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

///
/// - Parameters:
///   - maxPerWrite: the most one `write` is given (the symbolication index writes in page-cache
///     sized pieces: IndexFormat says why).
///   - abandonOnInterrupt: asked after each EINTR; true gives up there (false is returned), so a
///     command stopped by Ctrl-C while its reader stalls ends instead of retrying.
/// `errno` is the failed write's when false is returned (0-byte writes count as a failure).
@discardableResult
public func writeAll(
    _ fd: Int32, _ buf: UnsafeRawBufferPointer, maxPerWrite: Int = .max, abandonOnInterrupt: () -> Bool = { false }
) -> Bool {
    var off = 0
    while off < buf.count {
        let n = write(fd, buf.baseAddress! + off, min(buf.count - off, maxPerWrite))
        if n < 0 && errno == EINTR {
            if abandonOnInterrupt() { return false }
            continue
        }
        if n <= 0 { return false }
        off += n
    }
    return true
}

/// Everything on a file descriptor up to its end; what was read before an error other than EINTR.
public func readToEnd(_ fd: Int32) -> [UInt8] {
    // A regular file says how much is left: room for it at once, not a buffer regrown (and its
    // new pages faulted in) at each doubling. The size is only a hint; reading still goes to the end.
    var expected = 1 << 16
    var status = stat()
    if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
        let offset = lseek(fd, 0, SEEK_CUR)
        // Capped: a huge (or sparse) file still grows as it is read, not all at once up front.
        if offset >= 0, status.st_size > offset { expected = Int(min(status.st_size - offset, 1 << 30)) + 1 }
    }
    // The first `expected` bytes are read straight into the array (through a separate chunk,
    // every byte was copied twice); only a longer input goes on chunk by chunk.
    var ended = false
    var out = [UInt8](unsafeUninitializedCapacity: expected) { buffer, count in
        count = 0
        while count < buffer.count {
            let n = retryingOnInterrupt { read(fd, buffer.baseAddress! + count, buffer.count - count) }
            if n <= 0 { ended = true; return }
            count += n
        }
    }
    if ended { return out }
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { b in retryingOnInterrupt { read(fd, b.baseAddress!, b.count) } }
        if n <= 0 { return out }
        out.append(contentsOf: chunk[0..<n])
    }
}

/// Hands `body` a file descriptor's bytes piece by piece (at most `pieceSize` each) up to its end;
/// false when a read failed (what was handed over before stays handed over).
public func forEachPiece(of fd: Int32, pieceSize: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
    let buf = UnsafeMutableRawPointer.allocate(byteCount: pieceSize, alignment: 16)
    defer { buf.deallocate() }
    while true {
        let n = retryingOnInterrupt { read(fd, buf, pieceSize) }
        if n < 0 { return false }
        if n == 0 { return true }
        body(UnsafeRawBufferPointer(start: buf, count: n))
    }
}
