// One sender per envelope, across processes. Several instances of one program share its default
// data directory (workers of one binary on a host); each scans the outbox at start and keeps its
// own index, so two of them sent the same envelopes an earlier run left, and the server stored
// the lines twice. Sending an envelope takes an exclusive flock on its file for as long as it is
// read, sent and removed; an instance that finds it held steps over it (the other is sending it),
// and one that gets the lock on a file already removed (its link count is 0) steps over it too.
// Per envelope, not per pass: a pass that waits out a back-off holds no other instance's
// envelopes. The lock goes with its descriptor (unlocked first: a child forked meanwhile shares
// the open file and would otherwise keep it), and the kernel lets it go however the holder ends.
import FaultlineFiles
import FoundationEssentials
import Glibc

extension Outbox {
    /// A claim on one envelope; `release()` ends it.
    public struct SendingClaim {
        let descriptor: Int32
        public func release() {
            _ = flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }

    /// Claims `entry` for sending; nil when another process is sending it or it is gone.
    public func claim(_ entry: Entry) -> SendingClaim? {
        let fd = open(entry.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }  // sent and removed by another process
        guard retryingOnInterrupt({ flock(fd, LOCK_EX | LOCK_NB) }) == 0 else {
            close(fd)
            return nil
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_nlink > 0 else {
            _ = flock(fd, LOCK_UN)
            close(fd)
            return nil
        }
        return SendingClaim(descriptor: fd)
    }
}
