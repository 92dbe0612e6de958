// What the commands print about a failed write (the writes themselves: FaultlineFiles' writeAll).
import Glibc

/// The message for a failed write to standard output, with errno's reason.
public func standardOutputError() -> String {
    "cannot write to standard output: " + String(cString: strerror(errno))
}
