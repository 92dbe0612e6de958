// The kernel's core_pattern set to a test's own pipe handler for the length of one test, then put
// back as it was. The pattern is global to the machine: only a test that must see the kernel itself
// run the handler sets it, XCTest runs the tests one at a time, and `restore()` runs from a
// `defer` so a failing test leaves the pattern as it found it.
import Foundation
import Glibc

public final class KernelCorePattern {
    public static let path = "/proc/sys/kernel/core_pattern"
    /// The kernel truncates a longer pattern (CORENAME_MAX_SIZE).
    public static let maximumLength = 127

    public let previous: String
    private var restored = false

    /// Installs `pattern`, or throws why it cannot (not root, a read-only /proc, too long).
    public init(_ pattern: String) throws {
        guard pattern.utf8.count <= Self.maximumLength else {
            throw KernelCores.Unavailable(description: "core_pattern '\(pattern)' is longer than the kernel's \(Self.maximumLength) bytes")
        }
        guard let current = try? String(contentsOfFile: Self.path, encoding: .utf8) else {
            throw KernelCores.Unavailable(description: "\(Self.path) cannot be read")
        }
        previous = current.trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.write(pattern)
    }

    deinit { restore() }

    public func restore() {
        guard !restored else { return }
        restored = true
        try? Self.write(previous)
    }

    private static func write(_ pattern: String) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else {
            throw KernelCores.Unavailable(
                description: "\(path) cannot be written (errno \(errno)): setting the kernel's pipe handler needs root and a writable /proc/sys "
                    + "(CI runs the tests as root)")
        }
        defer { close(fd) }
        let bytes = Array((pattern + "\n").utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            throw KernelCores.Unavailable(description: "the kernel refused core_pattern '\(pattern)' (errno \(errno))")
        }
    }
}
