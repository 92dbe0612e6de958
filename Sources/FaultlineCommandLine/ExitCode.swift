// The exit codes and error line every `faultline` command shares (documented in docs/CLI.md),
// whichever of the two executables runs it (see CommandRouter in Sources/faultline).
import FoundationEssentials
import Glibc
import FaultlineFiles

/// Exit codes a CI script can rely on.
public enum ExitCode {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
    public static let inputError: Int32 = 3
    public static let partial: Int32 = 4
}

public func printError(_ message: String) {
    writeAll(2, Array(("faultline: " + message + "\n").utf8))
}
