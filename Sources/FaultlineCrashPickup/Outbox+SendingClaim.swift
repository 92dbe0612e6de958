// One sender per outbox directory at a time, across processes. Several instances of one program
// share its default data directory (workers of one binary on a host); each scans the outbox at
// start and keeps its own index, so without a claim two of them sent the same envelopes left by
// an earlier run, and the server stored the lines twice. A pass holds an exclusive flock on the
// directory's `.sending.lock` while it reads, sends and removes; another process's pass finds an
// envelope already sent gone from disk and steps over it. The kernel lets the lock go however the
// holder ends (kill -9 included).
import FoundationEssentials
import Glibc

extension Outbox {
    /// Runs `body` holding the directory's sending claim; nil, without running it, when another
    /// process (or another Outbox on the same directory) holds it for longer than `wait` seconds.
    public func withSendingClaim<T>(wait: Double = 0, _ body: () -> T) -> T? {
        let fd = open(directory + "/.sending.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return body() }  // no lock file (a read-only directory): as before
        defer { close(fd) }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let until = Double(deadline.tv_sec) + Double(deadline.tv_nsec) / 1e9 + wait
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { return body() }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            if Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 >= until { return nil }
            usleep(10_000)
        }
        return body()  // closing the descriptor lets the lock go
    }
}
