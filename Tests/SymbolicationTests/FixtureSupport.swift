// Test helpers: fixtures built once per test run by tools/build-symbolication-fixtures, source
// line markers, symbol addresses, and running processes (llvm-symbolizer, the faultline CLI).
import Foundation
import XCTest

struct FixtureError: Error, CustomStringConvertible { let description: String }

enum Fixtures {
    static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
    static let sourceDir = repoRoot + "/Fixtures/Symbolication"
    static let llvmSymbolizer: String? = {
        // The Swift toolchain's (LLVM 21) is the oracle: next to swiftc on PATH, else /opt/swift.
        var candidates: [String] = []
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(dir)/swiftc") {
            candidates.append("\(dir)/llvm-symbolizer")
        }
        candidates += ["/opt/swift/usr/bin/llvm-symbolizer", "/usr/bin/llvm-symbolizer"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Built once per process; every test reads the same files.
    private static let built: Result<String, FixtureError> = {
        let dir = scratchRoot + "/fixtures"
        let r = run(repoRoot + "/tools/build-symbolication-fixtures", [dir])
        guard r.status == 0 else { return .failure(FixtureError(description: "fixture build failed: \(r.stderr)")) }
        return .success(dir)
    }()

    static func directory() throws -> String { try built.get() }

    static func bases() throws -> [String] {
        let text = try String(contentsOfFile: try directory() + "/bases.txt", encoding: .utf8)
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }

    /// `fl_marker_*` label addresses recorded before the labels were stripped.
    static func markers(_ base: String) throws -> [String: UInt64] {
        let text = try String(contentsOfFile: try directory() + "/\(base).markers", encoding: .utf8)
        var out: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let a = UInt64(parts[0], radix: 16) else { continue }
            out[String(parts[1].dropFirst("fl_marker_".count))] = a
        }
        return out
    }

    /// The line number of the line carrying `// LINE:name` in a fixture source.
    static func line(_ name: String, in file: String) throws -> Int {
        let text = try String(contentsOfFile: sourceDir + "/" + file, encoding: .utf8)
        for (i, l) in text.components(separatedBy: "\n").enumerated() where l.hasSuffix("LINE:\(name)") { return i + 1 }
        throw FixtureError(description: "no LINE:\(name) in \(file)")
    }

    /// Every byte address of every function symbol of `path` (nm), each once, ascending.
    static func functionBytes(_ path: String) -> [UInt64] {
        Array(Set(functionSymbols(path).flatMap { s in (s.0..<(s.0 + s.1)).map { $0 } })).sorted()
    }

    /// The first fixture variant's object with DWARF, and its function bytes: the subject of the
    /// large-input tests, which draw thousands of lines from them.
    static func largeInputSubject() throws -> (object: String, functionBytes: [UInt64]) {
        guard let base = try bases().first else { throw FixtureError(description: "no fixture variants were built") }
        let object = "\(try directory())/\(base).full"
        let bytes = functionBytes(object)
        guard bytes.count > 50 else { throw FixtureError(description: "\(object): only \(bytes.count) function bytes") }
        return (object, bytes)
    }

    /// Function symbols (address, size, name) of a binary's text, from `nm -S`.
    static func functionSymbols(_ path: String) -> [(UInt64, UInt64, String)] {
        let r = run("/usr/bin/nm", ["-S", "--defined-only", path])
        var out: [(UInt64, UInt64, String)] = []
        for line in r.stdout.split(separator: "\n") {
            let p = line.split(separator: " ", maxSplits: 3)
            guard p.count == 4, p[2] == "t" || p[2] == "T", let a = UInt64(p[0], radix: 16), let s = UInt64(p[1], radix: 16), s > 0 else { continue }
            out.append((a, s, String(p[3])))
        }
        return out
    }

    static var faultlineBinary: String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        for candidate in [dir + "/faultline", Bundle.main.bundleURL.path + "/faultline"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return dir + "/faultline"
    }

    /// `status`: the exit code, or the signal that ended the process (as Process.terminationStatus).
    struct RunResult { var status: Int32; var stdout: String; var stderr: String }

    static func run(_ exe: String, _ args: [String], stdin: Data? = nil, environment: [String: String]? = nil) -> RunResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        if let environment { p.environment = environment }
        let out = Pipe(), err = Pipe(), inp = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = inp
        do { try p.run() } catch { return RunResult(status: -1, stdout: "", stderr: "\(error)") }
        // Drain both pipes on threads so a large output cannot block the child.
        final class Box: @unchecked Sendable { var data = Data() }
        let o = Box(), e = Box()
        let g = DispatchGroup()
        DispatchQueue.global().async(group: g) { o.data = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: g) { e.data = err.fileHandleForReading.readDataToEndOfFile() }
        if let stdin { inp.fileHandleForWriting.write(stdin) }
        try? inp.fileHandleForWriting.close()
        let end = p.awaitEnd(timeout: 300)
        g.wait()
        return RunResult(
            status: end.exitCode ?? end.signal ?? -1, stdout: String(decoding: o.data, as: UTF8.self), stderr: String(decoding: e.data, as: UTF8.self))
    }

    /// Everything this test process writes lives under one directory, removed when it exits.
    static let scratchRoot: String = {
        let root = NSTemporaryDirectory() + "faultline-symbolication-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Fixtures.scratchRoot) }
        return root
    }()

    static func temporaryDirectory(_ name: String) -> String {
        let d = scratchRoot + "/\(name)-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }
}

/// Deterministic pseudo-random numbers (SplitMix64) so address sets are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One address's record in llvm-symbolizer output: (function, location) pairs, innermost first.
typealias LLVMRecord = [(function: String, location: String)]

func parseLLVMOutput(_ text: String) -> [LLVMRecord] {
    var records: [LLVMRecord] = []
    var current: LLVMRecord = []
    var pending: String? = nil
    for line in text.components(separatedBy: "\n") {
        if line.isEmpty {
            if !current.isEmpty { records.append(current); current = [] }
            pending = nil
            continue
        }
        if let f = pending { current.append((f, line)); pending = nil } else { pending = line }
    }
    if !current.isEmpty { records.append(current) }
    return records
}
