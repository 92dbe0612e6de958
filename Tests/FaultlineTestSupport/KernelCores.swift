// Real kernel core files for the core tests: the crash programs of Fixtures/CoreDumps compiled at
// test time, run under `ulimit -c unlimited`, and the core the kernel wrote found wherever
// /proc/sys/kernel/core_pattern puts it (`core`, `core.%p`, an absolute directory). A pattern
// that pipes cores to a program (`|…`, systemd-coredump) makes file cores impossible: that is an
// error naming core_pattern, never a skipped test.
import Foundation
import Glibc

public enum KernelCores {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The languages the crash programs are written in, and how each is built (debug info on).
    public enum Language: String, CaseIterable, Sendable {
        case c, cxx, swift
        var source: String { ["c": "crash.c", "cxx": "crash.cpp", "swift": "crash.swift"][rawValue]! }
        func buildCommand(source: String, output: String) -> String {
            switch self {
            case .c: return "cc -g -O1 -pthread '\(source)' -o '\(output)'"
            case .cxx: return "c++ -g -O1 -pthread '\(source)' -o '\(output)'"
            case .swift: return "swiftc -g -Onone '\(source)' -o '\(output)' 2>&1"
            }
        }
    }

    /// The four ways each program crashes (its first argument).
    public static let crashKinds = ["null", "abort", "overflow", "thread"]

    /// Builds the crash program of `language` into `directory`; returns its path.
    public static func build(_ language: Language, in directory: String) throws -> String {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CoreDumps/\(language.source)").path
        let output = directory + "/crash-\(language.rawValue)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try TestSupport.shell(language.buildCommand(source: source, output: output))
        return output
    }

    /// The kernel's pattern, or an error when it pipes cores to a program.
    public static func filePattern() throws -> String {
        let pattern = ((try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !pattern.isEmpty else { throw Unavailable(description: "/proc/sys/kernel/core_pattern cannot be read: no kernel cores") }
        guard !pattern.hasPrefix("|") else {
            throw Unavailable(
                description: "/proc/sys/kernel/core_pattern is '\(pattern)': the kernel pipes cores to that program instead of writing a file, "
                    + "so these tests cannot get one (as root: echo core > /proc/sys/kernel/core_pattern)")
        }
        return pattern
    }

    /// Runs `program kind` in a fresh directory under `directory` with core dumps on and returns
    /// the core the kernel wrote, with how the program ended.
    public static func crash(_ program: String, _ kind: String, in directory: String) throws -> (core: String, outcome: TestSupport.Outcome, pid: Int32) {
        let pattern = try filePattern()
        let runDirectory = directory + "/run-\(PathName(program).last)-\(kind)"
        try FileManager.default.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
        // Swift's runtime backtracer would catch the signal first; the tests want the crash as a
        // program without any handler ends.
        // The shell execs the program, so the pid it prints first is the crashed process's.
        let outcome = try TestSupport.run(
            "/bin/sh", ["-c", "ulimit -c unlimited && cd '\(runDirectory)' && echo $$ && exec '\(program)' \(kind)"],
            environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: 120)
        let pid = Int32(outcome.stdout.split(separator: "\n").first ?? "") ?? 0
        guard outcome.signal != nil else {
            throw Unavailable(description: "\(program) \(kind) did not die by a signal: \(outcome)")
        }
        guard let core = newestCore(pattern: pattern, runDirectory: runDirectory) else {
            throw Unavailable(
                description: "\(program) \(kind) ended by signal \(outcome.signal!) but no core file matching core_pattern '\(pattern)' "
                    + "appeared (core_uses_pid \(usesPID)); is the hard RLIMIT_CORE 0, or the directory not writable? \(outcome)")
        }
        return (core, outcome, pid)
    }

    static var usesPID: String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/core_uses_pid", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The newest ELF core whose name fits the pattern (every %x a wildcard, a `.pid` the kernel
    /// may append allowed), in the pattern's directory (relative: the crashed program's).
    static func newestCore(pattern: String, runDirectory: String) -> String? {
        let path = pattern.hasPrefix("/") ? pattern : runDirectory + "/" + pattern
        let directory = (path as NSString).deletingLastPathComponent
        var glob = ""
        var percent = false
        for ch in (path as NSString).lastPathComponent {
            if percent {
                glob += ch == "%" ? "%" : "*"
                percent = false
            } else if ch == "%" {
                percent = true
            } else {
                glob.append(ch)
            }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let candidates = names.filter { fnmatch(glob, $0, 0) == 0 || fnmatch(glob + ".*", $0, 0) == 0 }.map { directory + "/" + $0 }
        return candidates.filter(isCore).max { modified($0) < modified($1) }
    }

    static func isCore(_ path: String) -> Bool {
        guard let h = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? h.close() }
        let b = [UInt8](h.readData(ofLength: 18))
        return b.count == 18 && b.starts(with: [0x7f, 0x45, 0x4c, 0x46]) && b[16] == 4 && b[17] == 0
    }

    static func modified(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }
}

private struct PathName {
    let path: String
    init(_ path: String) { self.path = path }
    var last: String { (path as NSString).lastPathComponent }
}
