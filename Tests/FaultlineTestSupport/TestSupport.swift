// Shared helpers for tests: temporary directories, built products, spawning real processes.
import Foundation
import FaultlineProtocol
import FaultlineFiles

public enum TestSupport {
    /// The repository root (tests read fixtures and tools from it).
    public static func repositoryRoot(file: String = #filePath) -> URL {
        var url = URL(fileURLWithPath: file)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(file)")
    }

    /// The directory holding built executables (next to the test bundle).
    public static var productsDirectory: URL {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") || dir.path.contains(".xctest/") {
            while dir.pathExtension != "xctest" && dir.path != "/" { dir.deleteLastPathComponent() }
            dir.deleteLastPathComponent()
        }
        if exe.pathExtension == "xctest" { dir = exe.deletingLastPathComponent() }
        return dir
    }

    public static func product(_ name: String) -> String { productsDirectory.appendingPathComponent(name).path }

    /// A fresh temporary directory, removed at process exit only if the test passed is not tracked:
    /// tests remove it themselves in tearDown when they want to.
    public static func makeTemporaryDirectory(_ label: String = "faultline-test") -> String {
        let base = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        let path = base + "/\(label)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// How a child process ended.
    public struct Outcome: CustomStringConvertible {
        public var exitCode: Int32?
        public var signal: Int32?
        public var stdout: String
        public var stderr: String
        public var duration: TimeInterval
        public var description: String {
            "exit=\(exitCode.map(String.init) ?? "-") signal=\(signal.map(String.init) ?? "-") (\(String(format: "%.2f", duration)) s)\nstdout: \(stdout.prefix(2000))\nstderr: \(stderr.prefix(4000))"
        }
    }

    /// Runs a program to completion (killing it after `timeout`) and reports how it ended.
    ///
    /// Spawned with posix_spawn and reaped with our own waitpid: Foundation's Process learns of a
    /// child's end through its SIGCHLD monitor, and once in a full-suite run it never did (the child
    /// a zombie, `isRunning` true for ever). A child gets default signal dispositions, an empty
    /// signal mask and no descriptors but stdio, as with Process.
    /// `watch`, when given, sees the child's pid at every poll (every 2 ms) while it runs; when it
    /// returns false the child's process group is killed (a test that measures the child bounds it).
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        removingEnvironment: [String] = [], timeout: TimeInterval = 60,
        watch: ((pid_t) -> Bool)? = nil
    ) throws -> Outcome {
        var env = ProcessInfo.processInfo.environment
        for k in removingEnvironment { env[k] = nil }
        for (k, v) in environment { env[k] = v }
        let directory = makeTemporaryDirectory("out")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outPath = directory + "/stdout", errPath = directory + "/stderr"

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // glibc ≥ 2.34 has it (Debian 12: 2.36); Swift's Glibc module does not declare it. Without
        // it the child would inherit the test process's descriptors: a precondition, not a fallback.
        let closeFromSymbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        precondition(closeFromSymbol != nil, "glibc without posix_spawn_file_actions_addclosefrom_np (needs 2.34)")
        if let closeFrom = closeFromSymbol {
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all); sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        // Its own process group, so a timeout also ends what it started (pg-local's server, a shell's children).
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let start = Date()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw ShellError(command: executable, output: "posix_spawn failed: \(String(cString: strerror(spawned)))")
        }
        let deadline = start.addingTimeInterval(timeout)
        var status: Int32 = 0
        while true {
            let r = retryingOnInterrupt { waitpid(pid, &status, WNOHANG) }
            if r == pid { break }
            if r < 0 {
                // Someone else reaped it: how it ended is unknown, never "exit 0".
                throw ShellError(command: executable, output: "waitpid failed: \(String(cString: strerror(errno)))")
            }
            if Date() >= deadline || watch?(pid) == false {
                kill(-pid, SIGKILL)
                _ = retryingOnInterrupt { waitpid(pid, &status, 0) }
                break
            }
            usleep(2_000)
        }
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import (macros).
        let termSignal = status & 0x7f
        let signaled = termSignal != 0 && termSignal != 0x7f
        return Outcome(
            exitCode: signaled ? nil : (status >> 8) & 0xff, signal: signaled ? termSignal : nil,
            stdout: out, stderr: err, duration: Date().timeIntervalSince(start))
    }

    /// Runs a shell command for test set-up (compilers); throws with its output on failure.
    public static func shell(_ command: String) throws -> String {
        let o = try run("/bin/sh", ["-c", command], timeout: 300)
        guard o.exitCode == 0 else { throw ShellError(command: command, output: o.description) }
        return o.stdout
    }
    public struct ShellError: Error, CustomStringConvertible {
        public let command: String
        public let output: String
        public init(command: String, output: String) { self.command = command; self.output = output }
        public var description: String { "command failed: \(command)\n\(output)" }
    }

    public static func files(in dir: String, suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(suffix) && !$0.hasPrefix(".") }
            .sorted().map { dir + "/" + $0 }
    }
}
