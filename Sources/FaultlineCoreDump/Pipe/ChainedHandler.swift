// `--then COMMAND…`: another core_pattern handler (systemd-coredump, apport) fed the same core,
// byte for byte, as the kernel would have fed it: core_pattern has room for one program only.
// Written to within the deadline: a chained handler that stops reading is left behind, never
// waited on past it.
import FoundationEssentials
import FaultlineFiles
import Glibc

final class ChainedHandler {
    private var input: Int32 = -1
    private var pid: pid_t = 0
    private(set) var failure: String?

    /// Starts `command` (a path and its arguments) with a pipe on its stdin; its stdout and stderr
    /// are ours.
    init(command: [String]) {
        guard let program = command.first else {
            failure = "--then needs a command"
            return
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            failure = "pipe: \(String(cString: strerror(errno)))"
            return
        }
        // Neither end may stay open in the child but as its stdin (dup2 clears the flag there).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        close(fds[0])
        guard spawned == 0 else {
            close(fds[1])
            failure = "cannot start \(program): \(String(cString: strerror(spawned)))"
            return
        }
        input = fds[1]
        // A chained handler that exits early must not end us by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// One chunk of the core, in order.
    func write(_ chunk: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) {
        guard input >= 0, failure == nil else { return }
        var done = 0
        while done < chunk.count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                stop("it did not read the core in time")
                return
            }
            var p = pollfd(fd: input, events: Int16(POLLOUT), revents: 0)
            let ms = Int32(clamping: left.components.seconds * 1000 + 1)
            let ready = retryingOnInterrupt { poll(&p, 1, ms) }
            guard ready > 0 else { continue }
            let n = retryingOnInterrupt { Glibc.write(input, chunk.baseAddress! + done, chunk.count - done) }
            if n < 0 && errno == EAGAIN { continue }
            guard n > 0 else {
                stop("it stopped reading (\(String(cString: strerror(errno))))")
                return
            }
            done += n
        }
    }

    /// Ends its input and waits for it until `deadline`; returns its exit status when it ended.
    func finish(deadline: ContinuousClock.Instant) -> Int32? {
        if input >= 0 { close(input); input = -1 }
        guard pid > 0 else { return nil }
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            let r = retryingOnInterrupt { waitpid(pid, &status, WNOHANG) }
            if r == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            if r < 0 { return nil }
            usleep(10_000)
        }
        failure = failure ?? "it had not finished by the deadline"
        return nil
    }

    private func stop(_ why: String) {
        failure = why
        close(input)
        input = -1
    }
}
