// Swift async crashes (issue 17): the report carries the task's logical callers (async frames),
// checked against Swift's own backtracer run in the same process on the same crash.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class AsyncCrashTests: XCTestCase {
    var dataDir = ""
    var crashDir: String { dataDir + "/crashes" }
    let crasher = TestSupport.product("faultline-crasher")
    let faultline = TestSupport.product("faultline")
    // Swift's backtracer as the reference: JSON on stderr, every frame, crashing thread only.
    static let swiftReference =
        "enable=yes,format=json,output-to=stderr,interactive=no,color=no,threads=crashed,images=none,registers=none,limit=none,demangle=no"

    override func setUp() { dataDir = TestSupport.makeTemporaryDirectory("async-crash") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dataDir) }

    func onlyReportPath() throws -> String {
        let reports = TestSupport.files(in: crashDir, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1, "expected exactly one report in \(crashDir)")
        return try XCTUnwrap(reports.first)
    }

    /// Swift's backtracer's frames of the crashed thread (kind, address, symbol, line).
    static func swiftFrames(_ stderr: String) throws -> [(kind: String, address: UInt64, symbol: String, line: Int?)] {
        let line = try XCTUnwrap(
            stderr.split(separator: "\n").first { $0.hasPrefix("{") && $0.contains("\"crashReport\"") },
            "Swift's backtracer wrote no JSON report:\n\(stderr.suffix(2000))")
        let json = try JSONValue.parse(Data(line.utf8))
        let thread = try XCTUnwrap(json["threads"]?.arrayValue?.first { $0["crashed"]?.boolValue == true })
        return (thread["frames"]?.arrayValue ?? []).compactMap { f in
            guard let kind = f["kind"]?.stringValue, let a = f["address"]?.stringValue.flatMap(Address.init(string:)) else { return nil }
            return (kind, a.value, f["symbol"]?.stringValue ?? "", f["sourceLocation"]?["line"]?.int64Value.map { Int($0) })
        }
    }

    /// The symbolicated event of the only report.
    func symbolicatedFrames(_ reportPath: String) throws -> (text: String, frames: [JSONValue]) {
        let text = try TestSupport.run(faultline, ["symbolicate", reportPath, "--crashed-only"]).stdout
        let json = try TestSupport.run(faultline, ["symbolicate", reportPath, "--json"]).stdout
        let event = try JSONValue.parse(Data(json.utf8))
        let frames = event["exception"]?["values"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        return (text, Array(frames.reversed()))  // innermost first
    }

    /// One async mode: same async chain as Swift's backtracer (addresses, in order), and the
    /// symbolicated report names every awaiting caller with its file:line, marked [async].
    func checkAsyncCrash(_ mode: String, callers expected: [(function: String, line: Int)], file: StaticString = #filePath, line: UInt = #line) throws {
        let outcome = try TestSupport.run(crasher, [mode, "--data-dir", dataDir], environment: ["SWIFT_BACKTRACE": Self.swiftReference], timeout: 120)
        XCTAssertEqual(outcome.signal, SIGILL, outcome.description, file: file, line: line)
        let path = try onlyReportPath()
        let report = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(report.asyncStoppedBy, "end", file: file, line: line)
        let reference = try Self.swiftFrames(outcome.stderr)
        let swiftAsync = reference.filter { $0.kind == "asyncResumePoint" }
        XCTAssertGreaterThanOrEqual(swiftAsync.count, expected.count, file: file, line: line)
        XCTAssertEqual(
            report.asyncFrames.map(\.value), swiftAsync.map(\.address),
            "async frames differ from Swift's backtracer: \(swiftAsync.map(\.symbol))", file: file, line: line)
        // The physical frame the chain starts from is the last one Swift's backtracer printed
        // before its first async frame.
        let lastPhysical = reference.lastIndex { $0.kind != "asyncResumePoint" && $0.kind != "truncated" && $0.kind != "omittedFrames" }
        if let after = report.asyncAfter, let lastPhysical {
            XCTAssertEqual(report.frames[after].address.value, reference[lastPhysical].address, file: file, line: line)
        }

        let (text, frames) = try symbolicatedFrames(path)
        let asyncFrames = frames.filter { $0["data"]?["faultline_async"]?.boolValue == true }
        XCTAssertEqual(asyncFrames.count, report.asyncFrames.count, file: file, line: line)
        for (i, want) in expected.enumerated() where i < asyncFrames.count {
            let f = asyncFrames[i]
            let fn = f["function"]?.stringValue ?? ""
            XCTAssertTrue(fn.contains(want.function), "async frame \(i) is \(fn), want \(want.function)\n\(text)", file: file, line: line)
            XCTAssertFalse(fn.contains("resume partial function"), "readable name: \(fn)", file: file, line: line)
            XCTAssertTrue((f["raw_function"]?.stringValue ?? "").hasPrefix("$s"), "raw name kept", file: file, line: line)
            XCTAssertEqual(f["lineno"]?.int64Value, Int64(want.line), "\(fn)\n\(text)", file: file, line: line)
            // Same line as Swift's backtracer gives for that resume point.
            XCTAssertEqual(swiftAsync[i].line, want.line, "Swift's backtracer: \(swiftAsync[i])", file: file, line: line)
        }
        XCTAssertTrue(text.contains("[async] "), text, file: file, line: line)
        XCTAssertFalse(text.contains("fl_thread_trampoline"), "Faultline's own frames are hidden by default:\n\(text)", file: file, line: line)
    }

    /// The line of Tests/CrashProbes/faultline-crasher/SwiftFaults.swift holding `text` (the await
    /// each async caller is suspended at), read from the source so an edit there moves no test.
    static func faultsLine(_ text: String) -> Int {
        let path = TestSupport.repositoryRoot().path + "/Tests/CrashProbes/faultline-crasher/SwiftFaults.swift"
        let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        return (lines.firstIndex { $0.contains(text) } ?? -1) + 1
    }
    static let middle = ("asyncMiddle", faultsLine("let r = await asyncLeaf(v)"))
    static let outer = ("asyncOuter", faultsLine("let r = await asyncMiddle(v)"))

    func testTaskForceUnwrapThreeAwaitsDeep() throws {
        try checkAsyncCrash("async-task", callers: [Self.middle, Self.outer, ("startUnstructuredTask", Self.faultsLine("print(await asyncOuter(nothing()))"))])
    }

    func testDetachedTask() throws {
        try checkAsyncCrash("async-detached", callers: [Self.middle, Self.outer])
    }

    func testTaskGroupChild() throws {
        try checkAsyncCrash("async-group", callers: [Self.middle, Self.outer])
    }

    func testActorMethod() throws {
        try checkAsyncCrash("async-actor", callers: [Self.middle, Self.outer, ("AsyncCounter.add", Self.faultsLine("let r = await asyncOuter(nothing())"))])
    }

    /// A corrupted chain ends with its reason, bounded, and the process still dies by its own signal.
    func testCorruptedAsyncContextEndsTheWalkWithAReason() throws {
        for (mode, reason, count) in [
            ("async-corrupt-unreadable", "unreadable context", 1), ("async-corrupt-loop", "loop", 1),
            ("async-corrupt-misaligned", "misaligned context", 0)
        ] {
            try? FileManager.default.removeItem(atPath: crashDir)
            let outcome = try TestSupport.run(crasher, [mode, "--data-dir", dataDir], environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: 60)
            XCTAssertEqual(outcome.signal, SIGSEGV, "\(mode): \(outcome.description)")
            let report = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: try onlyReportPath())))
            XCTAssertEqual(report.asyncStoppedBy, reason, mode)
            XCTAssertEqual(report.asyncFrames.count, count, mode)
            XCTAssertEqual(report.asyncAfter, 1, "the chain starts in the async caller of the probe (\(mode))")
            XCTAssertTrue(report.frames.count > 3, "the physical frames are all still there (\(mode))")
        }
    }

    /// A separate program built with swiftc at -Onone and -O, Faultline preloaded: the report's
    /// async frames are exactly the resume points Swift's backtracer prints for the same crash.
    func testSwiftcBuiltProgramDebugAndOptimizedMatchSwiftsBacktracer() throws {
        let lib = try PreloadLibrary.path()
        let source = dataDir + "/asyncapp.swift"
        try """
        @inline(never) func leaf(_ v: Int?) async -> Int {
            await Task.yield()
            return v!
        }
        @inline(never) func middle(_ v: Int?) async -> Int {
            let r = await leaf(v)
            return r &+ 1
        }
        @inline(never) func outer(_ v: Int?) async -> Int {
            let r = await middle(v)
            return r &+ 2
        }
        let t = Task.detached { () async -> Int in
            let v = Int(CommandLine.arguments.count > 5 ? "1" : "x")
            return await outer(v)
        }
        print(await t.value)
        """.write(toFile: source, atomically: true, encoding: .utf8)
        for opt in ["-Onone", "-O"] {
            let exe = dataDir + "/asyncapp\(opt)"
            _ = try TestSupport.shell("swiftc -g \(opt) -module-name asyncapp '\(source)' -o '\(exe)' 2>&1")
            try? FileManager.default.removeItem(atPath: crashDir)
            let outcome = try TestSupport.run(
                exe, [],
                environment: [
                    "LD_PRELOAD": lib, "FAULTLINE_CRASH_DIR": crashDir,
                    "SWIFT_BACKTRACE": Self.swiftReference
                ], timeout: 120)
            XCTAssertEqual(outcome.signal, SIGILL, "\(opt): \(outcome.description)")
            let path = try onlyReportPath()
            let report = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
            let swiftAsync = try Self.swiftFrames(outcome.stderr).filter { $0.kind == "asyncResumePoint" }
            XCTAssertEqual(report.asyncFrames.map(\.value), swiftAsync.map(\.address), "\(opt): \(swiftAsync.map(\.symbol))")
            // At -O the force-unwrap is a tail call out of the last partial function: no async
            // frame is left on the stack, and neither Swift's backtracer nor Faultline has a chain.
            guard opt == "-Onone" else { continue }
            XCTAssertGreaterThanOrEqual(swiftAsync.count, 3, "\(opt): \(swiftAsync.map(\.symbol))")
            let (text, frames) = try symbolicatedFrames(path)
            let names = frames.filter { $0["data"]?["faultline_async"]?.boolValue == true }.compactMap { $0["function"]?.stringValue }
            XCTAssertTrue(names.first { $0.contains("asyncapp.") }?.contains("middle") == true, "\(opt):\n\(text)")
            XCTAssertTrue(names.contains { $0.contains("outer") }, "\(opt):\n\(text)")
        }
    }
}
