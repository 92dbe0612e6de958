// `--keep-core MAX`: the whole core as the kernel piped it, beside its report, unless it is
// larger than MAX (then nothing is kept and the report says why): written under a temporary
// name and renamed only once complete, so a kept core is never a cut one.
import FoundationEssentials
import Glibc
import FaultlineFiles
import FaultlineProtocol

final class KeptCore {
    let path: String
    let maximumBytes: UInt64
    private let temporary: String
    private var fd: Int32
    private(set) var bytes: UInt64 = 0
    private(set) var failure: String?

    init(path: String, maximumBytes: UInt64, owner: (uid: uid_t, gid: gid_t)? = nil) {
        self.path = path
        self.maximumBytes = maximumBytes
        temporary = PathName.directory(path) + "/." + PathName.last(path) + ".tmp"
        fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if fd < 0 { failure = "cannot create \(temporary): \(String(cString: strerror(errno)))" }
        if fd >= 0, let owner, fchown(fd, owner.uid, owner.gid) != 0 { abandon("cannot chown \(temporary): \(String(cString: strerror(errno)))") }
    }

    /// One chunk of the core, in order.
    func append(_ chunk: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        bytes += UInt64(chunk.count)
        if bytes > maximumBytes {
            abandon("the core is larger than \(maximumBytes) bytes (--keep-core)")
            return
        }
        if !writeAll(fd, chunk) { abandon("cannot write \(temporary): \(String(cString: strerror(errno)))") }
    }

    /// Renames the copy into place when the whole core is in it; returns the path, or nil with `failure` set.
    func finish(complete: Bool, why: String?) -> String? {
        if failure == nil && !complete { abandon(why ?? "the core was not read to its end") }
        guard failure == nil else { return nil }
        close(fd)
        fd = -1
        guard rename(temporary, path) == 0 else {
            failure = "cannot rename \(temporary): \(String(cString: strerror(errno)))"
            unlink(temporary)
            return nil
        }
        return path
    }

    private func abandon(_ why: String) {
        failure = why
        if fd >= 0 { close(fd); fd = -1 }
        unlink(temporary)
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(temporary)
        }
    }
}
