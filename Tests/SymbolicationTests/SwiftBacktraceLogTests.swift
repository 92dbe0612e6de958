// Swift's own JSON crash logs, written by the toolchain's backtracer for real crashes, read by
// `faultline symbolicate` and `faultline crashes`; unknown JSON is an input error, never success.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class SwiftBacktraceLogTests: XCTestCase {
    /// Built and crashed once for the class: one log per fixture, by fixture name.
    nonisolated(unsafe) static var crashes: [String: SwiftCrashLogs.Crash] = [:]
    nonisolated(unsafe) static var work: String?
    let faultline = TestSupport.product("faultline")

    override class func setUp() {
        super.setUp()
        let dir = TestSupport.makeTemporaryDirectory("swift-backtrace-logs")
        work = dir
        for name in SwiftCrashLogs.fixtures.keys.sorted() {
            do {
                let program = try SwiftCrashLogs.build(name, in: dir)
                crashes[name] = try SwiftCrashLogs.crash(program, logDirectory: dir + "/logs-\(name)")
            } catch {
                FileHandle.standardError.write(Data("SwiftBacktraceLogTests set-up (\(name)) failed: \(error)\n".utf8))
            }
        }
    }

    override class func tearDown() {
        if let work { try? FileManager.default.removeItem(atPath: work) }
        super.tearDown()
    }

    func crash(_ name: String) throws -> SwiftCrashLogs.Crash {
        guard let c = Self.crashes[name] else { XCTFail("\(name) did not build or crash (see stderr)"); throw CocoaError(.fileNoSuchFile) }
        return c
    }

    func symbolicate(_ args: [String]) throws -> TestSupport.Outcome {
        try TestSupport.run(faultline, ["symbolicate", "--no-cache", "--no-system"] + args)
    }

    func testTheBacktracerWroteWhatTheReaderExpects() throws {
        for name in SwiftCrashLogs.fixtures.keys.sorted() {
            let c = try crash(name)
            XCTAssertEqual(c.outcome.signal, name == "bad-pointer" ? SIGSEGV : SIGILL, "\(name): \(c.outcome)")
            let log = try SwiftBacktraceLog.parse(Data(contentsOf: URL(fileURLWithPath: c.log)))
            XCTAssertEqual(log.architecture, "x86_64")
            let exe = try XCTUnwrap(log.images.first { $0.path == c.program }, "\(name): the executable is among the images")
            XCTAssertEqual(exe.buildID, try ELFBuildID.read(c.program), name)
            XCTAssertFalse(log.threads[log.crashedThreadIndex].registers.isEmpty, name)
        }
    }

    func testFatalErrorLogPrintsEveryThreadCrashingFirstWithSourceLines() throws {
        let c = try crash("fatal-error")
        let r = try symbolicate([c.log])
        XCTAssertEqual(r.exitCode.map { [0, 4].contains($0) }, true, r.description)  // libswiftCore may lack DWARF
        XCTAssertTrue(r.stdout.hasPrefix("Swift fatal error: "), r.stdout)
        XCTAssertTrue(r.stdout.contains("reported at \(TestSupport.repositoryRoot().path)/Fixtures/SwiftBacktrace/fatal-error.swift:5"), r.stdout)
        let crashing = try XCTUnwrap(r.stdout.components(separatedBy: "\nThread ").first)
        XCTAssertTrue(crashing.contains("swiftLogFixtureCheck"), r.stdout)
        XCTAssertTrue(crashing.contains("fatal-error.swift:5"), r.stdout)
        XCTAssertTrue(crashing.contains("fatal-error.swift:6"), "the recursion's own frames: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("\nThread 1"), "the sleeping thread is printed too:\n\(r.stdout)")
    }

    func testForceUnwrapCarriesTheRuntimesOwnWordsAndItsInlinedFrame() throws {
        let c = try crash("force-unwrap")
        let r = try symbolicate(["--json", c.log])
        let event = try JSONValue.parse(Data(r.stdout.utf8))
        let ex = try XCTUnwrap(event["exception"]?["values"]?[0])
        XCTAssertEqual(ex["type"]?.stringValue, "Swift runtime failure", r.stdout)
        XCTAssertEqual(ex["value"]?.stringValue, "Unexpectedly found nil while unwrapping an Optional value")
        let frames = ex["stacktrace"]?["frames"]?.arrayValue ?? []
        XCTAssertTrue(frames.contains { ($0["function"]?.stringValue ?? "").contains("swiftLogFixtureUnwrap") }, r.stdout)
        XCTAssertTrue(frames.contains { ($0["filename"]?.stringValue ?? "").hasSuffix("force-unwrap.swift") && $0["lineno"]?.int64Value == 6 }, r.stdout)
    }

    func testBadPointerIsASegfaultAtItsAddress() throws {
        let c = try crash("bad-pointer")
        let r = try symbolicate(["--json", c.log])
        let ex = try XCTUnwrap(try JSONValue.parse(Data(r.stdout.utf8))["exception"]?["values"]?[0])
        XCTAssertEqual(ex["type"]?.stringValue, "SIGSEGV", r.stdout)
        XCTAssertTrue(ex["value"]?.stringValue?.hasPrefix("Bad pointer dereference at 0x") ?? false, r.stdout)
        let top = try XCTUnwrap(ex["stacktrace"]?["frames"]?.arrayValue?.last)
        XCTAssertTrue(top["function"]?.stringValue?.contains("swiftLogFixturePoke") ?? false, r.stdout)
        XCTAssertEqual(top["lineno"]?.int64Value, 4, r.stdout)
    }

    func testCrashOnASecondaryThreadIsTheExceptionAndTheMainThreadIsListed() throws {
        let c = try crash("thread-crash")
        let r = try symbolicate(["--json", c.log])
        let event = try JSONValue.parse(Data(r.stdout.utf8))
        let ex = try XCTUnwrap(event["exception"]?["values"]?[0])
        let threads = event["threads"]?["values"]?.arrayValue ?? []
        // Every thread the log holds. Swift's backtracer usually writes both threads of this
        // fixture but, under load, sometimes only the crashed one: that is its output, not ours.
        let log = try SwiftBacktraceLog.parse(Data(contentsOf: URL(fileURLWithPath: c.log)))
        XCTAssertEqual(threads.count, log.threads.count, r.stdout)
        let crashed = try XCTUnwrap(threads.first { $0["crashed"]?.boolValue == true })
        XCTAssertEqual(crashed["id"], ex["thread_id"])
        XCTAssertNil(crashed["stacktrace"], "the crashing thread's stack is the exception's")
        let frames = ex["stacktrace"]?["frames"]?.arrayValue ?? []
        XCTAssertTrue(frames.contains { ($0["function"]?.stringValue ?? "").contains("swiftLogFixtureWorker") }, r.stdout)
        if log.threads.count == 2 {
            XCTAssertNotEqual(crashed["id"]?.int64Value, 0, "the main thread is listed first; the worker crashed")
            let main = try XCTUnwrap(threads.first { $0["crashed"]?.boolValue == false })
            XCTAssertFalse((main["stacktrace"]?["frames"]?.arrayValue ?? []).isEmpty, r.stdout)
        }
    }

    func testCrashesCommandConvertsADirectoryOfLogs() throws {
        let dir = try XCTUnwrap(Self.work) + "/all-logs"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for name in SwiftCrashLogs.fixtures.keys.sorted() {
            let c = try crash(name)
            try FileManager.default.copyItem(atPath: c.log, toPath: dir + "/" + (c.log as NSString).lastPathComponent)
        }
        let r = try TestSupport.run(faultline, ["crashes", dir])
        XCTAssertEqual(r.exitCode, 0, r.description)
        let events = try r.stdout.split(separator: "\n").map { try JSONValue.parse(Data($0.utf8)) }
        XCTAssertEqual(events.count, SwiftCrashLogs.fixtures.count, r.stdout)
        for e in events {
            XCTAssertEqual(e["platform"]?.stringValue, "native")
            XCTAssertEqual(e["level"]?.stringValue, "fatal")
            XCTAssertEqual(e["event_id"]?.stringValue?.count, 32)
            let images = e["debug_meta"]?["images"]?.arrayValue ?? []
            let exe = try XCTUnwrap(images.first { ($0["code_file"]?.stringValue ?? "").hasPrefix(Self.work!) }, e.jsonString)
            let id = try XCTUnwrap(ELFBuildID.read(exe["code_file"]!.stringValue!))
            XCTAssertEqual(exe["code_id"]?.stringValue, id.hex)
            XCTAssertEqual(exe["debug_id"]?.stringValue, id.debugID.description)
        }
        // The same log converted again gets the same event id: the server keeps one.
        let again = try TestSupport.run(faultline, ["crashes", dir])
        XCTAssertEqual(
            again.stdout.split(separator: "\n").map { try? JSONValue.parse(Data($0.utf8))["event_id"] },
            events.map { $0["event_id"] })
    }

    /// `--remove` deletes a crash file only once its event reached the output: standard output
    /// on a full disk (/dev/full: every write fails with ENOSPC) keeps every file.
    func testCrashesRemoveKeepsFilesWhoseEventsCouldNotBeWritten() throws {
        let dir = try XCTUnwrap(Self.work) + "/kept-logs"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let name = try XCTUnwrap(SwiftCrashLogs.fixtures.keys.sorted().first)
        let c = try crash(name)
        let copy = dir + "/" + (c.log as NSString).lastPathComponent
        try FileManager.default.copyItem(atPath: c.log, toPath: copy)
        let r = try TestSupport.run("/bin/sh", ["-c", "exec '\(faultline)' crashes --remove '\(dir)' > /dev/full"])
        XCTAssertEqual(r.exitCode, 1, r.description)
        XCTAssertTrue(r.stderr.contains("cannot write to standard output"), r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy), "the crash file was deleted though its event was not written")
        // With somewhere to write, the same command prints it and removes the file.
        let ok = try TestSupport.run(faultline, ["crashes", "--remove", dir])
        XCTAssertEqual(ok.exitCode, 0, ok.description)
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy))
    }

    func testUnknownOrCutShortJSONIsAnInputErrorNeverSilentSuccess() throws {
        let dir = try XCTUnwrap(Self.work)
        let c = try crash("fatal-error")
        let full = try Data(contentsOf: URL(fileURLWithPath: c.log))
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: dir + "/cut.json"))
        try Data(#"{"kind": "crashReport", "threads": []}"#.utf8).write(to: URL(fileURLWithPath: dir + "/nothread.json"))
        try Data(#"{"hello": "world", "threads": 3}"#.utf8).write(to: URL(fileURLWithPath: dir + "/other.json"))
        for (file, message) in [("cut.json", "not JSON"), ("nothread.json", "Swift crash log lacks"), ("other.json", "neither")] {
            let r = try symbolicate([dir + "/" + file])
            XCTAssertEqual(r.exitCode, 3, "\(file): \(r)")
            XCTAssertEqual(r.stdout, "", file)
            XCTAssertTrue(r.stderr.contains(message), "\(file): \(r.stderr)")
        }
        let mixed = dir + "/mixed"
        try FileManager.default.createDirectory(atPath: mixed, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: c.log, toPath: mixed + "/good.json")
        try FileManager.default.copyItem(atPath: dir + "/cut.json", toPath: mixed + "/cut.json")
        let r = try TestSupport.run(faultline, ["crashes", mixed])
        XCTAssertEqual(r.exitCode, 4, r.description)
        XCTAssertEqual(r.stdout.split(separator: "\n").count, 1, r.stdout)
        XCTAssertTrue(r.stderr.contains("cut.json"), r.stderr)
    }
}

/// The GNU build-id of an ELF file, read with `readelf` (independent of the code under test).
enum ELFBuildID {
    static func read(_ path: String) throws -> BuildID? {
        let out = try TestSupport.shell("readelf -n '\(path)'")
        guard let line = out.split(separator: "\n").first(where: { $0.contains("Build ID:") }) else { return nil }
        return BuildID(hex: String(line.split(separator: " ").last ?? ""))
    }
}
