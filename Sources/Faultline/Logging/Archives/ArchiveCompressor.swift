// gzip of one rolled file into its archive: temp name, fsync, rename, then the source goes.
import CZlib
import Foundation
import FaultlineFiles

enum ArchiveCompressor {
    enum Failure: Error, CustomStringConvertible {
        case io(String)
        case zlib(Int32)
        var description: String {
            switch self {
            case .io(let m): return m
            case .zlib(let rc): return "zlib error \(rc)"
            }
        }
    }

    /// Compresses `<dir>/<name>` to `<dir>/<name>.gz`. The archive appears only complete
    /// (written to `.gz.tmp`, fsync'd, renamed, folder fsync'd); the `.log` is removed after.
    /// No gzip mtime or name is written, so the same input always gives the same bytes.
    /// Returns the sizes of the log and of its archive.
    @discardableResult
    static func compress(directory: ArchiveDirectory, name: String, level: Int32 = 6) throws(Failure) -> (raw: Int, compressed: Int) {
        let source = directory.path + "/" + name
        let target = source + ".gz"
        let temporary = target + ".tmp"
        let src = open(source, O_RDONLY | O_CLOEXEC)
        guard src >= 0 else { throw .io("cannot open \(source): \(String(cString: strerror(errno)))") }
        defer { close(src) }
        let dst = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard dst >= 0 else { throw .io("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var ok = false
        defer { if !ok { unlink(temporary) } }
        do { try deflateFile(src, dst, level: level) } catch { close(dst); throw error }
        guard fsync(dst) == 0 else { close(dst); throw .io("fsync \(temporary): \(String(cString: strerror(errno)))") }
        close(dst)
        guard rename(temporary, target) == 0 else { throw .io("rename to \(target): \(String(cString: strerror(errno)))") }
        ok = true
        directory.syncDirectory()
        unlink(source)
        var from = stat(), to = stat()
        fstat(src, &from)
        stat(target, &to)
        return (Int(from.st_size), Int(to.st_size))
    }

    private static func deflateFile(_ src: Int32, _ dst: Int32, level: Int32) throws(Failure) {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .zlib(Z_STREAM_ERROR)
        }
        defer { deflateEnd(&stream) }
        let size = 256 * 1024
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { input.deallocate(); output.deallocate() }
        var finished = false
        while !finished {
            let n = retryingOnInterrupt { read(src, input, size) }
            guard n >= 0 else { throw .io("read: \(String(cString: strerror(errno)))") }
            let flush = n == 0 ? Z_FINISH : Z_NO_FLUSH
            stream.next_in = input
            stream.avail_in = uInt(n)
            repeat {
                stream.next_out = output
                stream.avail_out = uInt(size)
                let rc = deflate(&stream, flush)
                guard rc != Z_STREAM_ERROR else { throw .zlib(rc) }
                let produced = size - Int(stream.avail_out)
                guard writeAll(dst, UnsafeRawBufferPointer(start: output, count: produced)) else {
                    throw .io("write: \(String(cString: strerror(errno)))")
                }
                if rc == Z_STREAM_END { finished = true }
            } while stream.avail_out == 0
        }
    }
}
