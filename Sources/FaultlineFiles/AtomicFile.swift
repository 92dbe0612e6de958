// Files replaced whole: written to a temporary name, then renamed over the old one; with `sync`,
// fsync'd (file and folder) so the new content survives a power loss once this returns.
import FoundationEssentials
import Glibc
import Synchronization
import FaultlineProtocol

public enum AtomicFile {
    /// Temporary names are unique within the process too (two threads may replace one file).
    private static let counter = Atomic<Int>(0)

    /// Replaces `path` whole with `data`: readers see the old file or the new one, never a part.
    /// `sync`: the data and the rename are on disk when this returns (fsync of file and folder).
    /// `owner`: the file's owner and group from its first appearance under `path` (a root process
    /// writing for another user: a reader never sees it unreadable).
    public static func write(_ data: Data, to path: String, sync: Bool = false, owner: (uid: uid_t, gid: gid_t)? = nil) throws {
        let dir = PathName.directory(path)
        // Unique across processes and machines too: a folder may be shared by several servers
        // (whose pids can all be 1 in containers), and O_EXCL refuses a name in use.
        let unique = "\(getpid()).\(counter.wrappingAdd(1, ordering: .relaxed).newValue)." + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let tmp = dir + "/." + PathName.last(path) + "." + unique + ".tmp"
        let fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError.errno("create \(tmp)") }
        defer { close(fd) }
        let whole = data.withUnsafeBytes { writeAll(fd, $0) }
        guard whole else {
            let e = POSIXError.errno("write \(tmp)")
            unlink(tmp)
            throw e
        }
        if let owner, fchown(fd, owner.uid, owner.gid) != 0 {
            let e = POSIXError.errno("chown \(tmp)")
            unlink(tmp)
            throw e
        }
        // A failed fsync means the data may not be on disk: never report it durable.
        if sync, fsync(fd) != 0 {
            let e = POSIXError.errno("fsync \(tmp)")
            unlink(tmp)
            throw e
        }
        guard rename(tmp, path) == 0 else {
            let e = POSIXError.errno("rename to \(path)")
            unlink(tmp)
            throw e
        }
        if sync {
            // The rename is durable once the folder is: a failure here is reported too (the new
            // content is in place, but may not survive a power loss).
            let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard dfd >= 0 else { throw POSIXError.errno("open folder \(dir)") }
            defer { close(dfd) }
            guard fsync(dfd) == 0 else { throw POSIXError.errno("fsync folder \(dir)") }
        }
    }

    /// Whether `name` (a file name, not a path) is one of AtomicFile's temporaries: a writer
    /// killed mid-write leaves one behind, and directory sweeps remove old ones.
    public static func isTemporary(_ name: String) -> Bool { name.hasPrefix(".") && name.hasSuffix(".tmp") }
}
