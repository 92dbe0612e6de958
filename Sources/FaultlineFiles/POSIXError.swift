// A failed system call, with errno and what was being done.
import FoundationEssentials
import Glibc

public struct POSIXError: Error, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }
    public static func errno(_ operation: String) -> POSIXError { POSIXError(operation: operation, code: Glibc.errno) }
    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
