// Waiting for SIGTERM or SIGINT without work in a signal handler, and without a window in which
// either is lost.
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol
import FaultlineFiles

/// The write end of the self-pipe; the handler's only state (set once, before the handler is).
private nonisolated(unsafe) var shutdownPipeWriteEnd: Int32 = -1
/// Stop requests seen; a second one while the first stop is under way ends the process at once.
private nonisolated(unsafe) var shutdownRequests: Int32 = 0

/// A stop request is one byte in a pipe, written by a plain handler (write(2) is async-signal-safe).
/// Installed before the server announces itself, so a supervisor (or a test) that sends SIGTERM as
/// soon as it reads "listening on" is never ignored: the byte waits in the pipe until `wait()`.
struct ShutdownSignal {
    private let readEnd: Int32

    static func install() -> ShutdownSignal {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { fatalError("serve: pipe() failed: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        shutdownPipeWriteEnd = fds[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            let saved = errno
            shutdownRequests += 1
            // Asked twice (Ctrl-C again, or a supervisor's second SIGTERM): the stop is stuck.
            if shutdownRequests > 1 { _exit(128 + signal) }
            var byte: UInt8 = 1
            _ = write(shutdownPipeWriteEnd, &byte, 1)
            errno = saved
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for sig in [SIGTERM, SIGINT] { sigaction(sig, &action, nil) }
        return ShutdownSignal(readEnd: fds[0])
    }

    /// Blocks until SIGTERM or SIGINT has arrived (at any time since `install()`).
    func wait() {
        var byte: UInt8 = 0
        _ = retryingOnInterrupt { read(readEnd, &byte, 1) }
    }
}
