// The release recipe README documents, run for real: a SwiftPM package built in release mode,
// `faultline upload .build/release/` (a symbolic link), `faultline debug-files split`, a crash of
// the stripped binary symbolicated on the server from the split debug file alone, and
// `upload --wait` reporting what the backfill did (or that it failed).
import Foundation
import XCTest
import FaultlineServer
import FaultlineSymbolication
import FaultlineProtocol
import FaultlineTestSupport

final class ReleaseRecipeTests: XCTestCase {
    /// Built once for the class: `swift build -c release` of Fixtures/ReleasePackage.
    nonisolated(unsafe) static var package: String?
    nonisolated(unsafe) static var preloadLibrary: String?

    var server: TestServer!
    var work: String!
    let faultline = TestSupport.product("faultline")
    var url: String { "http://127.0.0.1:\(server.port)" }

    override class func setUp() {
        super.setUp()
        let dir = TestSupport.makeTemporaryDirectory("faultline-release-package")
        let fixture = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/ReleasePackage").path
        do {
            _ = try TestSupport.shell("cp -R '\(fixture)/.' '\(dir)/' && cd '\(dir)' && swift build -c release 2>&1")
            package = dir
            preloadLibrary = try PreloadLibrary.path()
        } catch {
            // Each test then fails with this message (never a skip: a broken build must show).
            FileHandle.standardError.write(Data("ReleaseRecipeTests set-up failed: \(error)\n".utf8))
        }
    }

    override class func tearDown() {
        if let package { try? FileManager.default.removeItem(atPath: package) }
        super.tearDown()
    }

    override func setUpWithError() throws {
        server = try TestServer()
        work = TestSupport.makeTemporaryDirectory("faultline-release-recipe")
    }
    override func tearDown() {
        server?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    func builtPackage() throws -> String {
        guard let p = Self.package else { XCTFail("the release package did not build (see stderr)"); throw CocoaError(.fileNoSuchFile) }
        return p
    }

    func upload(_ args: [String]) throws -> TestSupport.Outcome {
        try TestSupport.run(faultline, ["upload"] + args, environment: ["FAULTLINE_URL": url, "FAULTLINE_TOKEN": server.token], timeout: 120)
    }

    // MARK: 1. The walk

    func testUploadOfSwiftPMsReleaseLinkUploadsTheBinary() throws {
        let pkg = try builtPackage()
        var st = stat()
        XCTAssertEqual(lstat(pkg + "/.build/release", &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFLNK, "SwiftPM's .build/release is a symbolic link (the case this test is about)")
        let binary = pkg + "/.build/release/tinyapp"
        let id = try ELFSummary.read(path: binary).buildID

        let r = try upload([pkg + "/.build/release/"])
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertTrue(r.stdout.contains("uploaded \(id.hex) \(pkg)/.build/release/tinyapp "), r.stdout)
        XCTAssertFalse(r.stdout.contains("//"), "paths without doubled slashes:\n\(r.stdout)")
        // Object files (no build-id) and non-ELF files are counted, not listed one by one.
        XCTAssertTrue(r.stdout.contains("1 uploaded, 0 already on the server, 0 failed; skipped "), r.stdout)
        XCTAssertTrue(r.stdout.contains("not ELF"), r.stdout)
        XCTAssertFalse(r.stdout.contains("skip "), r.stdout)
        XCTAssertEqual(try server.server.stores.debugFiles.debugFiles().map(\.buildID), [id])
    }

    func testWalkSurvivesLinkLoopsAndUploadsEachBuildIDOnce() throws {
        let pkg = try builtPackage()
        let binary = pkg + "/.build/release/tinyapp"
        let fm = FileManager.default
        let tree = work + "/tree"
        try fm.createDirectory(atPath: tree + "/a/b", withIntermediateDirectories: true)
        try fm.copyItem(atPath: binary, toPath: tree + "/a/b/tinyapp")
        try fm.copyItem(atPath: binary, toPath: tree + "/a/tinyapp-copy")  // same build-id, another inode
        try fm.createSymbolicLink(atPath: tree + "/a/b/loop", withDestinationPath: "..")  // a/b/loop → a: a loop
        try fm.createSymbolicLink(atPath: tree + "/again", withDestinationPath: "a")
        try fm.createSymbolicLink(atPath: tree + "/file-link", withDestinationPath: "a/b/tinyapp")
        try fm.createSymbolicLink(atPath: tree + "/dangling", withDestinationPath: "nowhere")
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: tree + "/a/script.sh"))

        let dry = try upload(["--dry-run", tree + "//", tree + "/file-link"])
        XCTAssertEqual(dry.exitCode, 0, dry.description)
        XCTAssertLessThan(dry.duration, 30, "the walk ends despite the loop")
        XCTAssertEqual(dry.stdout.components(separatedBy: "would upload").count - 1, 1, "one build-id, uploaded once:\n\(dry.stdout)")
        XCTAssertTrue(dry.stdout.contains("1 duplicate build-id"), dry.stdout)
        XCTAssertFalse(dry.stdout.contains("//"), dry.stdout)

        // A link to a directory inside a directory is followed too (and the loop under it ends).
        try fm.createDirectory(atPath: work + "/outer", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: work + "/outer/inner", withDestinationPath: tree + "/a/b")
        let nested = try upload(["--dry-run", work + "/outer"])
        XCTAssertEqual(nested.exitCode, 0, nested.description)
        XCTAssertEqual(nested.stdout.components(separatedBy: "would upload").count - 1, 1, nested.stdout)
        XCTAssertTrue(nested.stdout.contains(" \(work!)/outer/inner/"), nested.stdout)

        let r = try upload(["--json", tree + "/again/"])
        XCTAssertEqual(r.exitCode, 0, r.description)
        let json = try JSONValue.parse(Data(r.stdout.utf8))
        XCTAssertEqual(json["uploaded"]?.int64Value, 1, r.stdout)
        XCTAssertEqual(json["skipped"]?["duplicate_build_id"]?.int64Value, 1, r.stdout)
        XCTAssertEqual(json["skipped"]?["not_elf"]?.int64Value, 1, r.stdout)
        XCTAssertEqual(json["exit_code"]?.int64Value, 0)
    }

    // MARK: 2. Split, ship the stripped binary, symbolicate its crash from the debug file alone

    func testSplitRecipeSymbolicatesAStrippedBinarysCrashFromTheDebugFileAlone() throws {
        let pkg = try builtPackage()
        let fm = FileManager.default
        try fm.createDirectory(atPath: work + "/dist", withIntermediateDirectories: true)
        let shipped = work + "/dist/tinyapp"
        try fm.copyItem(atPath: pkg + "/.build/release/tinyapp", toPath: shipped)
        let id = try ELFSummary.read(path: shipped).buildID

        let split = try TestSupport.run(faultline, ["debug-files", "split", "--output", work + "/debug", work + "/dist"])
        XCTAssertEqual(split.exitCode, 0, split.description)
        let (dir, rest) = id.buildIDPathComponents
        let debugFile = work + "/debug/.build-id/\(dir)/\(rest).debug"
        XCTAssertTrue(split.stdout.contains("split \(id.hex) \(shipped)"), split.stdout)
        let shippedInfo = try ELFInfo.read(path: shipped)
        XCTAssertFalse(shippedInfo.hasDebugInfo, "the shipped binary is stripped")
        XCTAssertEqual(shippedInfo.debugLink?.name, "tinyapp.debug")
        XCTAssertEqual(shippedInfo.buildID, id)
        let debugInfo = try ELFInfo.read(path: debugFile)
        XCTAssertTrue(debugInfo.hasDebugInfo)
        XCTAssertEqual(debugInfo.kind, .debugOnly)
        XCTAssertEqual(debugInfo.buildID, id)
        let again = try TestSupport.run(faultline, ["debug-files", "split", "--output", work + "/debug", work + "/dist"])
        XCTAssertTrue(again.stdout.contains("already split \(shipped)"), again.description)

        // The stripped binary crashes (LD_PRELOAD handler: no SDK inside the package).
        let crashes = work + "/crashes"
        try fm.createDirectory(atPath: crashes, withIntermediateDirectories: true)
        let crash = try TestSupport.run(
            shipped, ["7"],
            environment: [
                "LD_PRELOAD": try XCTUnwrap(Self.preloadLibrary),
                "FAULTLINE_CRASH_DIR": crashes, "SWIFT_BACKTRACE": "enable=no"
            ])
        XCTAssertEqual(crash.signal, SIGILL, crash.description)
        let report = try XCTUnwrap(TestSupport.files(in: crashes, suffix: ".crash.json").first)

        // Offline: the tree is what --debug-dir reads; without it the stripped binary has nothing.
        let withTree = try TestSupport.run(faultline, ["symbolicate", "--cache-dir", work + "/cache1", "--debug-dir", work + "/debug", report])
        XCTAssertTrue(withTree.stdout.contains("tinyLookup"), withTree.description)
        XCTAssertTrue(withTree.stdout.contains("main.swift:3"), withTree.description)
        let without = try TestSupport.run(faultline, ["symbolicate", "--cache-dir", work + "/cache2", report])
        XCTAssertFalse(without.stdout.contains("tinyLookup"), without.description)

        // The crash as an event, unsymbolicated on the server.
        let events = try TestSupport.run(faultline, ["crashes", crashes])
        let event = try JSONValue.parse(Data(try XCTUnwrap(events.stdout.split(separator: "\n").first).utf8))
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        try server.waitUntilIdle()
        let before = try server.getJSON("/api/0/projects/faultline/default/issues/")
        XCTAssertEqual(before.arrayValue?.count, 1)
        XCTAssertFalse(before.jsonString.contains("tinyLookup"))

        // Upload the tree and the shipped directory: the debug file, and beside it the stripped
        // binary of the same build-id, whose code and .eh_frame the debug file lacks (NOBITS) and
        // a minidump is walked with.
        let r = try upload(["--wait", "--json", work + "/debug", work + "/dist"])
        XCTAssertEqual(r.exitCode, 0, r.description)
        let json = try JSONValue.parse(Data(r.stdout.utf8))
        XCTAssertEqual(json["files"]?.arrayValue?.compactMap { $0["path"]?.stringValue }, [debugFile, shipped], r.stdout)
        XCTAssertEqual(json["files"]?[0]?["backfill"]?["state"]?.stringValue, "done", r.stdout)
        XCTAssertEqual(json["wait"]?["state"]?.stringValue, "finished", r.stdout)
        XCTAssertEqual(json["wait"]?["occurrences_symbolicated"]?.int64Value, 1, r.stdout)

        let files = try server.server.stores.debugFiles.debugFiles()
        XCTAssertEqual(files.map { [$0.hasDebugInfo, $0.isExecutable] }, [[true, true]], "the server holds the debug file and the build's code")
        let issueID = try XCTUnwrap(before[0]?["id"]?.stringValue)
        let issue = try server.getJSON("/api/0/issues/\(issueID)/")
        let frames = issue["stack"]?.arrayValue ?? []
        let lookup = frames.first { $0["function"]?.stringValue?.contains("tinyLookup") ?? false }
        XCTAssertNotNil(lookup, issue.jsonString)
        XCTAssertTrue(frames.contains { ($0["filename"]?.stringValue ?? "").hasSuffix("main.swift") && $0["lineno"]?.int64Value == 3 }, issue.jsonString)
    }

    // MARK: 3. --wait: counts, merges, and a backfill that fails

    func testWaitReportsSymbolicatedOccurrencesAndMergedIssues() throws {
        let program = try Fixtures.buildProgram(in: work)
        let leaf = program.symbols["faultline_fixture_leaf"]!, middle = program.symbols["faultline_fixture_middle"]!, main = program.symbols["main"]!
        // Two crash sites inside the same functions: two issues by address, one once symbolicated.
        for offsets in [[main + 8, middle + 4, leaf], [main + 9, middle + 5, leaf + 1]] {
            let e = TestEvents.native(buildID: program.buildID.hex, modulePath: "/opt/fixture/bin/fixture", offsets: offsets)
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
        }
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        XCTAssertEqual(issues.count, 2)

        let r = try upload(["--wait", program.path])
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertTrue(r.stdout.contains("2 earlier occurrence(s) symbolicated"), r.stdout)
        let after = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        XCTAssertEqual(after.count, 1)
        let survivor = try XCTUnwrap(after.first?["id"]?.stringValue)
        let merged = try XCTUnwrap(issues.compactMap { $0["id"]?.stringValue }.first { $0 != survivor })
        XCTAssertTrue(r.stdout.contains("issues merged: \(merged) → \(survivor)"), r.stdout)

        // Already on the server: nothing new was symbolicated by this run.
        let again = try upload(["--wait", "--json", program.path])
        XCTAssertEqual(again.exitCode, 0, again.description)
        let json = try JSONValue.parse(Data(again.stdout.utf8))
        XCTAssertEqual(json["present"]?.int64Value, 1)
        XCTAssertEqual(json["wait"]?["occurrences_symbolicated"]?.int64Value, 0, again.stdout)
    }

    func testWaitExitsWithItsOwnCodeWhenTheBackfillFails() throws {
        let python = try XCTUnwrap(ThirdParty.python(), "python3 is needed to break the server's database (tools/setup installs it)")
        let program = try Fixtures.buildProgram(in: work)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        try server.waitUntilIdle()
        // Take away the table backfill reads, from another connection (WAL allows it; PostgreSQL too): the upload
        // itself still succeeds, the backfill it starts cannot.
        let rename = "ALTER TABLE stack_modules RENAME TO stack_modules_gone"
        if let url = try TestDatabase.url(forDataDirectory: server.dataDirectory) {
            let r = try TestSupport.run("/usr/bin/psql", ["-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", rename])
            XCTAssertEqual(r.exitCode, 0, r.description)
        } else {
            _ = try TestSupport.shell(
                "'\(python)' -c \"import sqlite3; c = sqlite3.connect('\(server.dataDirectory)/faultline.sqlite'); c.execute('\(rename)'); c.commit()\"")
        }

        let r = try upload(["--wait", "--json", "--timeout", "60", program.path])
        XCTAssertEqual(r.exitCode, 5, r.description)
        let json = try JSONValue.parse(Data(r.stdout.utf8))
        XCTAssertEqual(json["uploaded"]?.int64Value, 1, r.stdout)
        XCTAssertEqual(json["wait"]?["state"]?.stringValue, "backfill_failed", r.stdout)
        XCTAssertEqual(json["files"]?[0]?["backfill"]?["state"]?.stringValue, "failed", r.stdout)
        XCTAssertTrue(json["files"]?[0]?["backfill"]?["error"]?.stringValue?.contains("stack_modules") ?? false, r.stdout)
    }

    func testWaitTimesOutWithItsOwnCode() throws {
        let program = try Fixtures.buildProgram(in: work)
        // A server whose index build (the first step of every backfill) takes 3 s.
        var config = try ServerConfiguration.test(dataDirectory: work + "/slow-server")
        config.makeSymbolicator = { _, _ in SlowToPrepare(seconds: 3) }
        let slow = try Server(config: config)
        try slow.start()
        defer { slow.stop() }
        let token = try XCTUnwrap(slow.bootstrap?.serverToken)
        let r = try TestSupport.run(
            faultline, ["upload", "--url", "http://127.0.0.1:\(slow.port)", "--token", token, "--wait", "--timeout", "0.5", program.path])
        XCTAssertEqual(r.exitCode, 6, r.description)
        XCTAssertTrue(r.stdout.contains("gave up waiting"), r.stdout)
        XCTAssertTrue(r.stdout.contains("1 uploaded"), r.stdout)
    }

    // MARK: 4. Sources through debuginfod

    func testGDBFetchesBundledSourcesThroughDebuginfod() throws {
        let gdb = try XCTUnwrap(ThirdParty.executable("gdb"), "gdb is not installed (tools/setup installs it)")
        try FileManager.default.createDirectory(atPath: work + "/src", withIntermediateDirectories: true)
        let program = try Fixtures.buildProgram(in: work + "/src")
        let stripped = work + "/fixture-stripped"
        _ = try TestSupport.shell("objcopy --strip-debug '\(program.path)' '\(stripped)'")
        func gdbList(_ cache: String) throws -> TestSupport.Outcome {
            try TestSupport.run(
                gdb, ["-nx", "-batch", "-iex", "set debuginfod enabled on", "-ex", "list faultline_fixture_leaf", stripped],
                environment: ["DEBUGINFOD_URLS": url, "DEBUGINFOD_CACHE_PATH": work + "/" + cache, "HOME": work], timeout: 120)
        }
        let sourceLine = "faultline_fixture_leaf(int *p) { return *p + 1; }"

        // The debug file alone, and the source gone from disk: gdb knows the line, not its text.
        XCTAssertEqual(try upload([program.path]).exitCode, 0)
        let movedAway = work + "/src-moved"
        try FileManager.default.moveItem(atPath: work + "/src", toPath: movedAway)
        let without = try gdbList("cache1")
        XCTAssertFalse(without.stdout.contains(sourceLine), "no source was bundled yet:\n\(without)")

        // Bundle the sources (the debug file is already there: only the sources go).
        try FileManager.default.moveItem(atPath: movedAway, toPath: work + "/src")
        let r = try upload(["--include-sources", "--json", program.path])
        XCTAssertEqual(r.exitCode, 0, r.description)
        let json = try JSONValue.parse(Data(r.stdout.utf8))
        XCTAssertGreaterThanOrEqual(json["files"]?[0]?["sources"]?["sent"]?.int64Value ?? 0, 1, r.stdout)
        let sourcePath = work + "/src/fixture0.c"
        let direct = RawHTTP.send(port: server.port, method: "GET", path: "/buildid/\(program.buildID.hex)/source\(sourcePath)")
        XCTAssertEqual(direct.status, 200, direct.text)
        XCTAssertTrue(direct.text.contains(sourceLine))
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/buildid/\(program.buildID.hex)/source/etc/passwd").status, 404)

        try FileManager.default.moveItem(atPath: work + "/src", toPath: movedAway)
        let with = try gdbList("cache2")
        XCTAssertTrue(with.stdout.contains(sourceLine), "gdb fetched the source through /source:\n\(with)")

        // The cap: with 10 bytes allowed, nothing is sent and the run says so.
        try FileManager.default.moveItem(atPath: movedAway, toPath: work + "/src")
        let capped = try upload(["--include-sources", "--sources-max-bytes", "10", program.path])
        XCTAssertTrue(capped.stdout.contains("sources: 0 sent (0 bytes)") && capped.stdout.contains("over the size cap"), capped.stdout)
    }

    func testStatusEndpointNeedsTheServerToken() throws {
        let path = "/api/0/debug-files/status/?build_ids=" + String(repeating: "ab", count: 20)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: path).status, 401)
        let ok = try server.getJSON(path)
        XCTAssertEqual(ok["files"]?[0]?["installed"]?.boolValue, false)
        XCTAssertEqual(ok["files"]?[0]?["backfill"]?["state"]?.stringValue, "none")
        XCTAssertEqual(server.get("/api/0/debug-files/status/?build_ids=../../etc").status, 400)
    }
}

/// Resolves nothing and takes its time to build an index: a backfill that outlasts `--timeout`.
struct SlowToPrepare: FrameSymbolicating {
    let seconds: Double
    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
        .unresolved(.missingDebugFile)
    }
    func invalidate(buildID: BuildID) {}
    func prepare(buildID: BuildID) { Thread.sleep(forTimeInterval: seconds) }
}
