// Real Swift runtime JSON crash logs for tests: a Fixtures/SwiftBacktrace program compiled with
// the toolchain's swiftc and crashed under SWIFT_BACKTRACE=…,format=json.
import Foundation

public enum SwiftCrashLogs {
    public struct Crash {
        /// The program that crashed (as built: with its DWARF unless it was stripped).
        public var program: String
        /// The JSON log the backtracer wrote.
        public var log: String
        public var outcome: TestSupport.Outcome
    }

    /// The fixtures and how each is built (force-unwrap optimized, so the trap names its failure).
    public static let fixtures: [String: [String]] = [
        "fatal-error": ["-Onone", "-g"], "force-unwrap": ["-O", "-g"],
        "bad-pointer": ["-Onone", "-g"], "thread-crash": ["-Onone", "-g"]
    ]

    /// Compiles `Fixtures/SwiftBacktrace/<name>.swift` into `directory/<name>`.
    public static func build(_ name: String, in directory: String) throws -> String {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/SwiftBacktrace/\(name).swift").path
        let out = directory + "/" + name
        let flags = (fixtures[name] ?? ["-Onone", "-g"]).joined(separator: " ")
        _ = try TestSupport.shell("swiftc \(flags) '\(source)' -o '\(out)' 2>&1")
        return out
    }

    /// Runs `program` under Swift's backtracer with JSON output into `logDirectory` (created) and
    /// returns the one new log. Threads and images: the JSON defaults (all threads, images the
    /// frames mention).
    public static func crash(_ program: String, logDirectory: String, arguments: [String] = []) throws -> Crash {
        try FileManager.default.createDirectory(atPath: logDirectory, withIntermediateDirectories: true)
        let before = Set(TestSupport.files(in: logDirectory, suffix: ".json"))
        let outcome = try TestSupport.run(
            program, arguments,
            environment: [
                "SWIFT_BACKTRACE": "enable=yes,format=json,output-to=\(logDirectory),cache=no"
            ], timeout: 120)
        guard let log = TestSupport.files(in: logDirectory, suffix: ".json").first(where: { !before.contains($0) }) else {
            throw TestSupport.ShellError(command: "\(program) under SWIFT_BACKTRACE", output: "no JSON crash log written\n\(outcome)")
        }
        return Crash(program: program, log: log, outcome: outcome)
    }
}
