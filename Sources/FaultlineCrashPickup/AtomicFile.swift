// Files replaced whole: written to a temporary name, then renamed over the old one.
import FoundationEssentials
import Glibc
import FaultlineProtocol

package enum AtomicFile {
    package static func write(_ data: Data, to path: String, sync: Bool = false) throws {
        let dir = PathName.directory(path)
        let tmp = dir + "/." + PathName.last(path) + ".\(getpid()).tmp"
        let fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError.errno("create \(tmp)") }
        defer { close(fd) }
        var written = 0
        try data.withUnsafeBytes { raw in
            while written < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    let e = POSIXError.errno("write \(tmp)")
                    unlink(tmp)
                    throw e
                }
                written += n
            }
        }
        if sync { fsync(fd) }
        guard rename(tmp, path) == 0 else {
            let e = POSIXError.errno("rename to \(path)")
            unlink(tmp)
            throw e
        }
        if sync {
            let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 { fsync(dfd); close(dfd) }
        }
    }
}
