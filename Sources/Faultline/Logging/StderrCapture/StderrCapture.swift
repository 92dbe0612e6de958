// stderr capture: fd 2 becomes a pipe; a thread reads it and tees every byte into a capped file,
// into the crash core's tail ring (the crash report carries the last N KiB), and on to the
// original stderr.
//
// Hazards and what is done about them:
// - The capture thread falls behind: writers block on a full pipe exactly as they would on a slow
//   terminal (the pipe is enlarged to 1 MiB when the kernel allows). Nothing is dropped; a crash
//   drains what is still in the pipe itself (non-blocking), puts it in the report's tail,
//   appends it to the capture file and forwards it.
// - A crash while the pipe is full (the capture thread stopped, or crashed itself): the crash
//   core's own messages go to the original stderr, never into the pipe, so the handler cannot
//   block on it (FL_LOG in safe_io.h).
// - fork: the child has no capture thread, so a pthread_atfork child handler points its fd 2
//   back at the original stderr (its output is not captured, never stuck) and detaches the
//   crash path from the parent's pipe and file. posix_spawn'ed children (Foundation's Process)
//   inherit fd 2, which is the pipe: fd 2 cannot be close-on-exec, since it is the child's
//   stderr (the other ends, the read end and the saved original, are close-on-exec). Their
//   output is captured while this process lives; a child that outlives it gets EPIPE (or
//   SIGPIPE) on stderr, so give such a child `originalStandardError`.
// - stderr was a closed descriptor: capture still works (file + tail), nothing is forwarded, and
//   fd 2 stays occupied so a later open() cannot become "stderr" by accident.
// - The original stderr is a closed pipe: SIGPIPE is blocked on the capture thread, EPIPE stops
//   forwarding, capture continues.
// - Normal exit: fd 2 is pointed back at the original, the thread reads the pipe to its end.
import CFaultlineCrash
import Foundation
import Synchronization
import FaultlineFiles

public enum StderrCapture {
    /// What a running capture uses.
    public struct Status: Sendable {
        public var file: String
        public var tailBytes: Int
        public var forwarding: Bool
    }

    nonisolated(unsafe) static var originalFD: Int32 = -1  // set before the pipe replaces fd 2
    private static let running = Mutex<Status?>(nil)
    private static let stopRequested = Atomic<Bool>(false)
    private static let finished = DispatchSemaphore(value: 0)
    nonisolated(unsafe) private static var readFD: Int32 = -1

    public struct StartError: Error, CustomStringConvertible { public let description: String }

    /// Starts the capture once per process (later calls return the running status). The capture
    /// file never passes `maximumBytes` (older bytes give way); a cap under 4096 bytes throws.
    @discardableResult
    public static func start(file path: String, maximumBytes: Int = 2 * 1024 * 1024, tailBytes: Int = 16 * 1024) throws(StartError) -> Status {
        if let s = running.withLock({ $0 }) { return s }
        let file: CappedFile
        do { file = try CappedFile(path: path, cap: maximumBytes) } catch { throw StartError(description: error.description) }

        var original = fcntl(2, F_DUPFD_CLOEXEC, 3)
        if original < 0 {
            // fd 2 is closed: occupy it so the pipe (and later opens) do not land on 2.
            let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
            if null >= 0 && null != 2 { dup2(null, 2); close(null) }
            original = -1
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            if original >= 0 { close(original) }
            throw StartError(description: "cannot create the capture pipe: \(String(cString: strerror(errno)))")
        }
        for i in 0..<2 {
            // Above 0–2 (stdin/stdout may be closed too), close-on-exec.
            if fds[i] < 3 { let moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3); close(fds[i]); fds[i] = moved } else { _ = fcntl(fds[i], F_SETFD, FD_CLOEXEC) }
        }
        let flags = fcntl(fds[0], F_GETFL)
        _ = fcntl(fds[0], F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fds[1], 1031 /* F_SETPIPE_SZ */, 1 << 20)
        guard faultline_stderr_tail_configure(tailBytes, fds[0], original) == 0 else {
            close(fds[0]); close(fds[1]); if original >= 0 { close(original) }
            throw StartError(description: "the stderr tail is already configured with another size")
        }
        originalFD = original
        readFD = fds[0]
        file.onReopen = { faultline_stderr_tail_set_file($0) }
        faultline_stderr_tail_set_file(file.fd)
        fflush(nil)
        dup2(fds[1], 2)  // dup2 clears CLOEXEC: children inherit the capturing stderr
        close(fds[1])
        pthread_atfork(nil, nil, stderrCaptureAfterForkChild)
        let status = Status(file: path, tailBytes: tailBytes, forwarding: original >= 0)
        running.withLock { $0 = status }
        let t = Thread { captureLoop(file: file) }
        t.name = "faultline.stderr"
        t.start()
        atexit { StderrCapture.stop() }
        return status
    }

    public static var status: Status? { running.withLock { $0 } }

    /// The stderr the process had before the capture (nil when it was closed or no capture runs).
    /// Give it to a child that may outlive this process (`process.standardError = …`): a child
    /// that inherits fd 2 writes into the capture pipe, and once this process has exited nobody
    /// reads it (the child gets EPIPE, or is killed by SIGPIPE).
    public static var originalStandardError: FileHandle? {
        guard status != nil, originalFD >= 0 else { return nil }
        return FileHandle(fileDescriptor: originalFD, closeOnDealloc: false)
    }

    /// The current tail (what a crash report would carry), oldest byte first.
    public static func tail() -> [UInt8] {
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        let n = buf.withUnsafeMutableBytes { faultline_stderr_tail_copy($0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        return Array(buf[..<n])
    }

    /// Points fd 2 back at the original stderr and waits (up to 1 s) for the thread to copy what
    /// is left in the pipe. Called at exit.
    public static func stop() {
        guard running.withLock({ $0 }) != nil, !stopRequested.exchange(true, ordering: .sequentiallyConsistent) else { return }
        fflush(nil)
        if originalFD >= 0 {
            dup2(originalFD, 2)
        } else {
            let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
            if null >= 0 { dup2(null, 2); close(null) }
        }
        _ = finished.wait(timeout: .now() + 1)
    }

    private static func captureLoop(file: CappedFile) {
        var block = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &block, nil)
        var forward = originalFD >= 0
        let size = 65536
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        var pfd = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        while true {
            guard faultline_stderr_tail_begin_read() != 0 else { usleep(100_000); continue }  // a crash drains the pipe
            let n = retryingOnInterrupt { read(readFD, buffer.baseAddress, size) }
            if n > 0 {
                // All three inside the read window: a crash waits for them, then appends and
                // forwards what it drains after these bytes, in order.
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<n])
                faultline_stderr_tail_append(chunk.baseAddress, n)
                _ = file.append([chunk])
                if forward && !writeAll(originalFD, chunk) { forward = false }
                faultline_stderr_tail_end_read()
                continue
            }
            faultline_stderr_tail_end_read()
            if n == 0 { break }  // every write end is closed (stop() at exit)
            if errno != EAGAIN { break }
            if stopRequested.load(ordering: .sequentiallyConsistent) && n < 0 {
                // Drained after stop; children may still hold the write end, so do not wait for EOF.
                break
            }
            _ = poll(&pfd, 1, 100)
        }
        faultline_stderr_tail_detach_pipe()
        finished.signal()
    }
}

/// pthread_atfork child handler: a forked child writes straight to the original stderr, and its
/// crash handler neither drains the parent's pipe nor appends to the parent's capture file.
private func stderrCaptureAfterForkChild() {
    if StderrCapture.originalFD >= 0 { dup2(StderrCapture.originalFD, 2) }
    faultline_stderr_tail_detach_pipe()
}
