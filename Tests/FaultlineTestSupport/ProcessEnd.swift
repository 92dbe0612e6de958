// Waiting for a child started with Foundation's Process, bounded, and without relying on Process
// to notice the end: its SIGCHLD monitor once never did in a full-suite run (TestSupport.run says
// more), and an unbounded waitUntilExit() turns any such miss, or a child that ignores its
// signal, into a suite that hangs until CI's limit instead of a failure that names the test.
import Foundation

/// How a child ended, or that it did not within the time given (it was then killed).
public struct ProcessEnd: Equatable, CustomStringConvertible {
    public var exitCode: Int32?
    public var signal: Int32?
    public var timedOut = false

    public init(exitCode: Int32?, signal: Int32?, timedOut: Bool = false) {
        self.exitCode = exitCode
        self.signal = signal
        self.timedOut = timedOut
    }

    public var description: String {
        if timedOut { return "did not end in time (killed)" }
        if let s = signal { return "killed by signal \(s)" }
        return "exit \(exitCode.map(String.init) ?? "?")"
    }
}

extension Process {
    /// Sends `signal`, then waits for the end as `awaitEnd` does.
    @discardableResult
    public func end(with signal: Int32 = SIGTERM, timeout: TimeInterval = 60) -> ProcessEnd {
        if processIdentifier > 0 { kill(processIdentifier, signal) }
        return awaitEnd(timeout: timeout)
    }

    /// Waits at most `timeout` for the child to end; after that it is killed (SIGKILL) and the
    /// answer says so. The end is seen with waitid(WNOWAIT), which leaves the child for Foundation
    /// to reap; when Foundation reaped it first, its own record is read.
    @discardableResult
    public func awaitEnd(timeout: TimeInterval = 60) -> ProcessEnd {
        let pid = processIdentifier
        guard pid > 0 else { return ProcessEnd(exitCode: nil, signal: nil) }
        let deadline = Date().addingTimeInterval(timeout)
        var killed = false
        while true {
            var info = siginfo_t()
            let r = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if r == 0 && info._sifields._sigchld.si_pid == pid {
                let status = info._sifields._sigchld.si_status
                var end = info.si_code == CLD_EXITED ? ProcessEnd(exitCode: status, signal: nil) : ProcessEnd(exitCode: nil, signal: status)
                end.timedOut = killed
                return end
            }
            if r < 0 && errno == ECHILD {
                // Already reaped by Foundation's monitor: it recorded how.
                let until = Date().addingTimeInterval(5)
                while isRunning && Date() < until { usleep(2_000) }
                if isRunning { return ProcessEnd(exitCode: nil, signal: nil, timedOut: killed) }
                var end =
                    terminationReason == .exit
                    ? ProcessEnd(exitCode: terminationStatus, signal: nil) : ProcessEnd(exitCode: nil, signal: terminationStatus)
                end.timedOut = killed
                return end
            }
            if !killed && Date() >= deadline {
                kill(pid, SIGKILL)
                killed = true
            }
            usleep(2_000)
        }
    }
}
