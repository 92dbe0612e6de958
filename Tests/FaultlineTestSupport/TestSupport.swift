// Shared helpers for tests: temporary directories, built products, spawning real processes.
import Foundation
import FaultlineProtocol

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
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           removingEnvironment: [String] = [], timeout: TimeInterval = 60) throws -> Outcome {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for k in removingEnvironment { env[k] = nil }
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let outURL = URL(fileURLWithPath: makeTemporaryDirectory("out") + "/stdout")
        let errURL = URL(fileURLWithPath: outURL.deletingLastPathComponent().path + "/stderr")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        let start = Date()
        try p.run()
        let deadline = start.addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { usleep(5_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        p.waitUntilExit()
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: outURL.deletingLastPathComponent())
        let signaled = p.terminationReason == .uncaughtSignal
        return Outcome(exitCode: signaled ? nil : p.terminationStatus, signal: signaled ? p.terminationStatus : nil,
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
