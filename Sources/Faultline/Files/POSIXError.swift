// A failed system call, with errno and what was being done.
import Foundation

struct POSIXError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    static func errno(_ operation: String) -> POSIXError { POSIXError(operation: operation, code: Foundation.errno) }
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
