// What the commands print about a failed write (the writes themselves: FaultlineFiles' writeAll).
import Glibc

/// The message for a failed write to standard output, with the reason `code` gives (errno by default).
public func standardOutputError(_ code: Int32 = errno) -> String {
    "cannot write to standard output: " + String(cString: strerror(code))
}
