// The CLI's exit codes (documented in README.md).
import Foundation
import FaultlineProtocol

/// Exit codes a CI script can rely on.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let inputError: Int32 = 3
    static let partial: Int32 = 4
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data(("faultline: " + message + "\n").utf8))
}
