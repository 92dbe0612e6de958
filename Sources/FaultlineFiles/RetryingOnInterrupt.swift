// The one EINTR rule for Swift code: a system call a signal interrupted before it did anything is
// made again. Every read, write, flock, waitpid or poll outside the crash core goes through this
// (or through writeAll/readToEnd, which do); the crash core keeps its own async-signal-safe copy in
// CFaultlineCrash/safe_io.c.
import Glibc

/// Makes `call` again while it fails with EINTR (a negative result with `errno` EINTR) and returns
/// the first result that is not that; `errno` is the call's own when the result is negative.
@inline(__always)
public func retryingOnInterrupt<Result: SignedInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}
