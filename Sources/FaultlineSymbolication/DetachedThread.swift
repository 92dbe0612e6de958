// Threads started and left to finish on their own (background full-index builds, the second half
// of a parallel build), on pthreads: FoundationEssentials has no `Thread`. Its own name, not
// Foundation's, so a file that sees both modules is never ambiguous.
import Glibc

enum DetachedThread {
    /// Runs `body` on a new detached thread (default stack size, as Foundation's `Thread`). False
    /// when no thread could be made (EAGAIN under load): the caller does the work itself or not
    /// at all — a server must not die because a background build could not start.
    @discardableResult
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Start { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, &attr,
            { arg in
                Unmanaged<Start>.fromOpaque(arg!).takeRetainedValue().body()
                return nil
            }, start)
        if rc != 0 { Unmanaged<Start>.fromOpaque(start).release() }
        return rc == 0
    }
}
