// Flush at normal exit and on SIGTERM, so the last logs and the session end are not lost.
import Foundation
import Synchronization
import FaultlineFiles

/// SIGTERM arrives through a plain sigaction handler that only writes one byte to a pipe (all a
/// signal handler may do); a thread of ours reads it, flushes, then restores the default action
/// and re-raises, so the process still dies by SIGTERM. No SIG_IGN is involved: a caught signal
/// is reset to its default across execve, so child processes are unaffected, and an app that
/// installs its own SIGTERM handling later simply replaces ours.
enum ExitHooks {
    nonisolated(unsafe) static var termPipe: (read: Int32, write: Int32) = (-1, -1)  // set once before the handler exists
    private static let installed = Atomic<Bool>(false)

    private static let startHookInstalled = Atomic<Bool>(false)

    /// Registered by start on the app's thread, so it runs after every exit hook registered later
    /// (atexit runs newest first): if the process exits while start's background half is still
    /// running, this waits for it (up to 2 s), and glibc then runs the hook that half registered
    /// meanwhile (our flush). OpenSSL registers none (CryptoLibrary).
    static func waitForStartAtExit() {
        guard !startHookInstalled.exchange(true, ordering: .relaxed) else { return }
        // A child forked meanwhile has no background thread to wait for.
        atexit { if !SDKState.shared.isForkedChild { SDKState.shared.waitForStart(timeout: 2) } }
    }

    /// Called after libcurl is initialised (see SDKState.startSending).
    static func install() {
        guard !installed.exchange(true, ordering: .relaxed) else { return }
        atexit { Faultline.close(timeout: 2) }

        var current = sigaction()
        sigaction(SIGTERM, nil, &current)
        guard current.__sigaction_handler.sa_handler == nil else { return }  // only over SIG_DFL
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        termPipe = (fds[0], fds[1])
        let waiter = Thread {
            Worker.blockAppSignals()
            var byte: UInt8 = 0
            _ = retryingOnInterrupt { read(ExitHooks.termPipe.read, &byte, 1) }
            Faultline.close(timeout: 2)
            signal(SIGTERM, SIG_DFL)
            kill(getpid(), SIGTERM)
        }
        waiter.name = "faultline.sigterm"
        waiter.start()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = faultlineSIGTERMHandler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGTERM, &action, nil)
    }
}

/// Runs in signal context: one write(2), nothing else.
func faultlineSIGTERMHandler(_ signal: Int32) {
    var byte: UInt8 = 1
    let saved = errno
    _ = write(ExitHooks.termPipe.write, &byte, 1)
    errno = saved
}
