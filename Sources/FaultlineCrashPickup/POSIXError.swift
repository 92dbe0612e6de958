// A failed system call, with errno and what was being done.
import FoundationEssentials
import Glibc

package struct POSIXError: Error, CustomStringConvertible {
    package let operation: String
    package let code: Int32
    package static func errno(_ operation: String) -> POSIXError { POSIXError(operation: operation, code: Glibc.errno) }
    package var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
