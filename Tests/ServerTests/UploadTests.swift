// Debug-file upload: sentry-cli's chunk protocol by hand, `faultline upload`, real sentry-cli,
// and reading files back through debuginfod (our endpoint, the real debuginfod-find client).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineHashing

final class UploadTests: XCTestCase {
    var server: TestServer!
    var work: String!

    override func setUpWithError() throws {
        server = try TestServer()
        work = TestSupport.makeTemporaryDirectory("faultline-upload")
    }
    override func tearDown() {
        server?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    func postChunks(_ parts: [(name: String, field: String, data: Data)]) -> RawHTTP.Response {
        let boundary = "b-\(UUID().uuidString)"
        var body = Data()
        for p in parts {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(p.field)\"; filename=\"\(p.name)\"\r\n\r\n".utf8))
            body.append(p.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/organizations/faultline/chunk-upload/",
            headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
    }

    /// One assemble request; with `wait`, asked again while any file is `created` or `assembling`
    /// (as sentry-cli --wait polls).
    func assemble(_ files: JSONValue, wait: Bool = true) -> JSONValue? {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let r = RawHTTP.send(
                port: server.port, method: "POST", path: "/api/0/projects/faultline/default/files/difs/assemble/",
                headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"], body: files.serialized())
            XCTAssertEqual(r.status, 200, r.text)
            let pending = (r.json?.objectValue ?? [:]).values.contains { ["created", "assembling"].contains($0["state"]?.stringValue ?? "") }
            if !wait || !pending || Date() > deadline { return r.json }
            usleep(20_000)
        }
    }

    func testAssemblyRunsOnAWorkerAndTheClientPolls() throws {
        let program = try Fixtures.buildProgram(in: work)
        let file = try Data(contentsOf: URL(fileURLWithPath: program.path))
        let sha = SHA1Hash.hex(file)
        XCTAssertEqual(postChunks([(sha, "file", file)]).status, 200)
        let spec: JSONValue = [sha: ["name": "fixture", "chunks": [.string(sha)]]]
        // The request only queues the work: the reply does not wait for the file to be built.
        let first = assemble(spec, wait: false)?[sha]?["state"]?.stringValue
        XCTAssertTrue(["created", "assembling"].contains(first ?? ""), "the HTTP thread does not assemble: \(first ?? "nil")")
        let final = assemble(spec)
        XCTAssertEqual(final?[sha]?["state"]?.stringValue, "ok", final?.jsonString ?? "")
        XCTAssertEqual(final?[sha]?["dif"]?["codeId"]?.stringValue, program.buildID.hex)
        XCTAssertEqual(try server.server.stores.debugFiles.debugFile(buildID: program.buildID)?.hasDebugInfo, true)
    }

    func testChunkProtocolVerifiesHashesAndStoresByBuildID() throws {
        let program = try Fixtures.buildProgram(in: work)
        let options = try server.getJSON("/api/0/organizations/faultline/chunk-upload/")
        XCTAssertEqual(options["hashAlgorithm"]?.stringValue, "sha1")
        XCTAssertEqual(options["compression"], ["gzip"])
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/api/0/organizations/faultline/chunk-upload/").status, 401)

        let file = try Data(contentsOf: URL(fileURLWithPath: program.path))
        let sha = SHA1Hash.hex(file)
        // A part named with the wrong hash is refused.
        let wrong = postChunks([(String(repeating: "0", count: 40), "file", file)])
        XCTAssertEqual(wrong.status, 400)
        XCTAssertTrue(wrong.json?["detail"]?.stringValue?.contains("SHA-1") ?? false, wrong.text)
        // Existence probe and missing chunks.
        let probe = assemble([sha: ["name": "fixture", "chunks": []]])
        XCTAssertEqual(probe?[sha]?["state"]?.stringValue, "not_found")
        let missing = assemble([sha: ["name": "fixture", "chunks": [.string(sha)]]])
        XCTAssertEqual(missing?[sha]?["missingChunks"], [.string(sha)])
        // The right chunk, gzip'd, then assemble with a hostile name.
        XCTAssertEqual(postChunks([(sha, "file_gzip", Deflate.gzip(file)!)]).status, 200)
        let done = assemble([sha: ["name": "../../../../tmp/evil-name", "chunks": [.string(sha)]]])
        XCTAssertEqual(done?[sha]?["state"]?.stringValue, "ok", done?.jsonString ?? "")
        XCTAssertEqual(done?[sha]?["dif"]?["codeId"]?.stringValue, program.buildID.hex)
        XCTAssertEqual(done?[sha]?["dif"]?["objectName"]?.stringValue, "evil-name")
        let (dir, rest) = program.buildID.buildIDPathComponents
        let stored = "\(server.dataDirectory)/debug/.build-id/\(dir)/\(rest).debug"
        XCTAssertEqual(FileManager.default.contents(atPath: stored), file)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(server.dataDirectory)/debug/.build-id/\(dir)/\(rest)"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/evil-name"))
        // Now the probe says ok.
        XCTAssertEqual(assemble([sha: ["name": "fixture", "chunks": []]])?[sha]?["state"]?.stringValue, "ok")
    }

    /// A build-id names one build: a second file claiming it (here the same binary with its
    /// .debug_info overwritten) is answered `ok` but never replaces the stored file, which the
    /// index, the backfill and debuginfod all read. A richer file still does (DWARF over symbols).
    func testAnotherFileWithAStoredBuildIDNeverReplacesItUnlessRicher() throws {
        let work: String = self.work
        let program = try Fixtures.buildProgram(in: work)
        let good = try Data(contentsOf: URL(fileURLWithPath: program.path))
        let stripped = work + "/stripped"
        _ = try TestSupport.shell("objcopy --strip-debug '\(program.path)' '\(stripped)'")
        let forged = work + "/forged"
        _ = try TestSupport.shell(
            "cp '\(program.path)' '\(forged)' && objcopy --dump-section .debug_info=\(work)/info '\(forged)' && "
                + "head -c $(stat -c %s \(work)/info) /dev/zero | tr '\\0' '\\377' > \(work)/ff && "
                + "objcopy --update-section .debug_info=\(work)/ff '\(forged)'")
        let (dir, rest) = program.buildID.buildIDPathComponents
        let stored = "\(server.dataDirectory)/debug/.build-id/\(dir)/\(rest).debug"
        func upload(_ path: String) throws -> String? {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let sha = SHA1Hash.hex(data)
            XCTAssertEqual(postChunks([(sha, "file", data)]).status, 200)
            return assemble([sha: ["name": "program", "chunks": [.string(sha)]]])?[sha]?["state"]?.stringValue
        }
        XCTAssertEqual(try upload(stripped), "ok")
        XCTAssertNotEqual(FileManager.default.contents(atPath: stored), good, "symbols only, for now")
        XCTAssertEqual(try upload(program.path), "ok")
        XCTAssertEqual(FileManager.default.contents(atPath: stored), good, "DWARF replaces symbols")
        try server.waitUntilIdle()
        let backfills = try server.getJSON("/api/0/backfills/").arrayValue?.count ?? 0
        XCTAssertEqual(try upload(forged), "ok", "the build-id's debug file is on the server")
        XCTAssertEqual(FileManager.default.contents(atPath: stored), good, "the stored DWARF stays")
        XCTAssertEqual(try upload(stripped), "ok")
        XCTAssertEqual(FileManager.default.contents(atPath: stored), good)
        try server.waitUntilIdle()
        XCTAssertEqual(try server.getJSON("/api/0/backfills/").arrayValue?.count ?? 0, backfills, "nothing changed: nothing re-symbolicated")
        let served = server.get("/buildid/\(program.buildID.hex)/debuginfo")
        XCTAssertEqual(served.body, good, "debuginfod serves the file the index was built from")
    }

    func testChunkURLUsesTheConfiguredPublicURL() throws {
        var config = try ServerConfiguration.test(dataDirectory: work + "/public-url-data")
        config.publicURL = "https://errors.example.com/"
        let s = try Server(config: config)
        try s.start()
        defer { s.stop() }
        let token = try XCTUnwrap(s.bootstrap?.serverToken)
        let r = RawHTTP.send(
            port: s.port, method: "GET", path: "/api/0/organizations/faultline/chunk-upload/",
            headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(r.json?["url"]?.stringValue, "https://errors.example.com/api/0/organizations/faultline/chunk-upload/")
        // The DSN the server prints is at the public URL too (it was at the listening address).
        let b = try XCTUnwrap(s.bootstrap)
        let dsn = s.dsn(key: b.publicKey, project: b.project)
        XCTAssertEqual(dsn, "https://\(b.publicKey.value)@errors.example.com/\(b.project.id)")
        XCTAssertEqual(dsn, ProjectAdministration.dsn(key: b.publicKey, project: b.project, serverURL: "https://errors.example.com/"))
        XCTAssertEqual(try DSN(parsing: dsn).envelopeURL.absoluteString, "https://errors.example.com/api/\(b.project.id)/envelope/")
    }

    func testNonELFIsRejectedWithClearDetail() throws {
        let text = Data("this is not a debug file\n".utf8)
        let sha = SHA1Hash.hex(text)
        XCTAssertEqual(postChunks([(sha, "file", text)]).status, 200)
        let r = assemble([sha: ["name": "notes.txt", "chunks": [.string(sha)]]])
        XCTAssertEqual(r?[sha]?["state"]?.stringValue, "error")
        XCTAssertTrue(r?[sha]?["detail"]?.stringValue?.contains("not an ELF") ?? false, r?.jsonString ?? "")
        XCTAssertTrue(try server.server.stores.debugFiles.debugFiles().isEmpty)
    }

    func testAChunkDamagedOnDiskIsAskedForAgainNotFailedForever() throws {
        let program = try Fixtures.buildProgram(in: work)
        let file = try Data(contentsOf: URL(fileURLWithPath: program.path))
        let sha = SHA1Hash.hex(file)
        XCTAssertEqual(postChunks([(sha, "file", file)]).status, 200)
        // The stored chunk is cut short, as a crash before it reached the disk would leave it.
        let chunkPath = "\(server.dataDirectory)/chunks/\(sha)"
        XCTAssertTrue(FileManager.default.fileExists(atPath: chunkPath), "chunks live under <data>/chunks")
        try file.prefix(100).write(to: URL(fileURLWithPath: chunkPath))
        let first = assemble([sha: ["name": "fixture", "chunks": [.string(sha)]]])
        XCTAssertEqual(first?[sha]?["state"]?.stringValue, "not_found", first?.jsonString ?? "")
        XCTAssertEqual(first?[sha]?["missingChunks"], [.string(sha)])
        XCTAssertEqual(postChunks([(sha, "file", file)]).status, 200)
        XCTAssertEqual(assemble([sha: ["name": "fixture", "chunks": [.string(sha)]]])?[sha]?["state"]?.stringValue, "ok")
    }

    func testChecksumMismatchIsAnError() throws {
        let a = Data("chunk-a".utf8)
        XCTAssertEqual(postChunks([(SHA1Hash.hex(a), "file", a)]).status, 200)
        let claimed = String(repeating: "ab", count: 20)
        let r = assemble([claimed: ["name": "x", "chunks": [.string(SHA1Hash.hex(a))]]])
        XCTAssertEqual(r?[claimed]?["state"]?.stringValue, "error")
        XCTAssertEqual(assemble([claimed: ["name": "x", "chunks": [.string(SHA1Hash.hex(a))]]])?[claimed]?["state"]?.stringValue, "error", "it stays one")
    }

    /// A failed assembly (a client's mistake, or a token holder's on purpose) naming chunks another
    /// upload has sent takes none of them away, and fails no other chunk list for its checksum.
    func testAFailedAssemblyTakesNoChunkFromAnotherUpload() throws {
        let program = try Fixtures.buildProgram(in: work)
        let file = try Data(contentsOf: URL(fileURLWithPath: program.path))
        let sha = SHA1Hash.hex(file)
        XCTAssertEqual(postChunks([(sha, "file", file)]).status, 200)
        let other = String(repeating: "cd", count: 20)
        XCTAssertEqual(assemble([other: ["name": "x", "chunks": [.string(sha)]]])?[other]?["state"]?.stringValue, "error")
        let junk = Data("junk".utf8)
        XCTAssertEqual(postChunks([(SHA1Hash.hex(junk), "file", junk)]).status, 200)
        XCTAssertEqual(assemble([sha: ["name": "x", "chunks": [.string(SHA1Hash.hex(junk))]]])?[sha]?["state"]?.stringValue, "error")
        let done = assemble([sha: ["name": "fixture", "chunks": [.string(sha)]]])
        XCTAssertEqual(done?[sha]?["state"]?.stringValue, "ok", done?.jsonString ?? "")
    }

    func testFaultlineUploadCommandAndDebuginfodFind() throws {
        let program = try Fixtures.buildProgram(in: work)
        try FileManager.default.createDirectory(atPath: work + "/tree/sub", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: program.path, toPath: work + "/tree/sub/fixture")
        try Data("not elf".utf8).write(to: URL(fileURLWithPath: work + "/tree/readme.txt"))
        let exe = TestSupport.product("faultline")
        let url = "http://127.0.0.1:\(server.port)"

        let dry = try TestSupport.run(exe, ["upload", "--dry-run", work + "/tree"])
        XCTAssertEqual(dry.exitCode, 0, dry.description)
        XCTAssertTrue(dry.stdout.contains(program.buildID.hex), dry.stdout)
        XCTAssertTrue(try server.server.stores.debugFiles.debugFiles().isEmpty, "dry run must not upload")

        let first = try TestSupport.run(exe, ["upload", work + "/tree"], environment: ["FAULTLINE_URL": url, "FAULTLINE_TOKEN": server.token])
        XCTAssertEqual(first.exitCode, 0, first.description)
        XCTAssertTrue(first.stdout.contains("uploaded \(program.buildID.hex)"), first.stdout)
        let second = try TestSupport.run(exe, ["upload", "--url", url, "--token", server.token, work + "/tree"])
        XCTAssertEqual(second.exitCode, 0, second.description)
        XCTAssertTrue(second.stdout.contains("present \(program.buildID.hex)"), second.stdout)

        XCTAssertEqual(try TestSupport.run(exe, ["upload", "--url", url, "--token", server.token, work + "/nope"]).exitCode, 3)
        XCTAssertEqual(try TestSupport.run(exe, ["upload", "--url", url, "--token", "flst_wrong", work + "/tree"]).exitCode, 1)
        XCTAssertEqual(try TestSupport.run(exe, ["upload", "--url", url]).exitCode, 2)

        // Our debuginfod endpoint, then the real client.
        let direct = RawHTTP.send(port: server.port, method: "GET", path: "/buildid/\(program.buildID.hex)/debuginfo")
        XCTAssertEqual(direct.status, 200)
        XCTAssertEqual(direct.headers["x-debuginfod-size"], String(direct.body.count))
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/buildid/\(String(repeating: "ab", count: 20))/debuginfo").status, 404)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/buildid/..%2F..%2Fetc/debuginfo").status, 404)
        let find = "/usr/bin/debuginfod-find"
        guard FileManager.default.isExecutableFile(atPath: find) else { return XCTFail("debuginfod-find is not installed (tools/setup installs debuginfod)") }
        let env = ["DEBUGINFOD_URLS": url, "DEBUGINFOD_CACHE_PATH": work + "/dcache"]
        for kind in ["debuginfo", "executable"] {
            let r = try TestSupport.run(find, [kind, program.buildID.hex], environment: env)
            XCTAssertEqual(r.exitCode, 0, r.description)
            let path = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertEqual(FileManager.default.contents(atPath: path), FileManager.default.contents(atPath: program.path))
        }
        let unknown = try TestSupport.run(find, ["debuginfo", String(repeating: "cd", count: 20)], environment: env)
        XCTAssertNotEqual(unknown.exitCode, 0)
    }

    func testRealGDBFetchesDebugInfoForAStrippedBinaryFromTheServer() throws {
        guard let gdb = ThirdParty.executable("gdb") else { return XCTFail("gdb is not installed (tools/setup installs it)") }
        let program = try Fixtures.buildProgram(in: work)
        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        let stripped = work + "/stripped"
        _ = try TestSupport.shell("objcopy --strip-debug '\(program.path)' '\(stripped)'")
        let env: [String: String] = ["DEBUGINFOD_URLS": "http://127.0.0.1:\(server.port)", "DEBUGINFOD_CACHE_PATH": work + "/gdb-cache", "HOME": work]
        let withServer = try TestSupport.run(
            gdb,
            [
                "-nx", "-batch", "-iex", "set debuginfod enabled on",
                "-ex", "info line faultline_fixture_leaf", stripped
            ], environment: env, timeout: 120)
        XCTAssertTrue(withServer.stdout.contains("fixture0.c"), "gdb found the line through our debuginfod endpoint:\n\(withServer)")
        let without = try TestSupport.run(
            gdb, ["-nx", "-batch", "-ex", "info line faultline_fixture_leaf", stripped],
            environment: ["HOME": work], removingEnvironment: ["DEBUGINFOD_URLS"], timeout: 120)
        XCTAssertFalse(without.stdout.contains("fixture0.c"), "without the server the stripped binary has no lines")
    }

    /// sentry-cli pointed at this test's server, reading nothing from the machine's own set-up.
    func sentryCLIEnvironment() -> [String: String] {
        [
            "SENTRY_URL": "http://127.0.0.1:\(server.port)", "SENTRY_AUTH_TOKEN": server.token, "SENTRY_ORG": "faultline",
            "SENTRY_PROJECT": "default", "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "1"
        ]
    }

    func testRealSentryCLIUploadsDebugFiles() throws {
        guard let cli = ThirdParty.executable("sentry-cli") else {
            return XCTFail("sentry-cli is not installed (tools/setup runs pip install sentry-cli)")
        }
        let program = try Fixtures.buildProgram(in: work)
        let env = sentryCLIEnvironment()
        // --wait: sentry-cli polls assemble until the server's assembly workers are done (without
        // it, it stops at `created`, as it does against Sentry).
        let r = try TestSupport.run(cli, ["debug-files", "upload", "--wait", program.path], environment: env, timeout: 120)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let files = try server.server.stores.debugFiles.debugFiles()
        XCTAssertEqual(files.map(\.buildID), [program.buildID])
        XCTAssertTrue(files.first?.hasDebugInfo ?? false)
        // Second run: the server already has it.
        let again = try TestSupport.run(cli, ["debug-files", "upload", program.path], environment: env, timeout: 120)
        XCTAssertEqual(again.exitCode, 0, again.description)
        XCTAssertTrue((again.stdout + again.stderr).contains("Nothing to upload") || (again.stdout + again.stderr).contains("already"), again.description)
    }
}

extension UploadTests {
    /// `sentry-cli debug-files upload --include-sources --wait`, a common CI step, sends a Sentry
    /// source bundle beside the debug file: it is read into the source store (debuginfod serves
    /// the lines) and the upload exits 0 (the bundle was refused as "not an ELF file": exit 1).
    func testSentryCLIsSourceBundleIsStoredAndServed() throws {
        guard let cli = ThirdParty.executable("sentry-cli") else {
            return XCTFail("sentry-cli is not installed (tools/setup runs pip install sentry-cli)")
        }
        let program = try Fixtures.buildProgram(in: work)
        let env = sentryCLIEnvironment()
        let r = try TestSupport.run(cli, ["debug-files", "upload", "--include-sources", "--wait", program.path], environment: env, timeout: 120)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let source = work + "/fixture0.c"
        let served = RawHTTP.send(port: server.port, method: "GET", path: "/buildid/\(program.buildID.hex)/source\(source)")
        XCTAssertEqual(served.status, 200, served.text)
        XCTAssertEqual(served.body, try Data(contentsOf: URL(fileURLWithPath: source)), "the source as it was built")
        XCTAssertEqual(try server.server.stores.debugFiles.debugFiles().map(\.buildID), [program.buildID])
    }

    /// A damaged bundle is an error for the upload, never a half-stored one.
    func testADamagedSourceBundleIsRefused() throws {
        let manifest = Data(#"{"code_id":"0011223344556677","files":{"files/a.c":{"type":"source","path":"/src/a.c"}}}"#.utf8)
        let cases: [(String, Data)] = [
            ("a ZIP's first bytes only", Data([0x50, 0x4B, 0x03, 0x04])),
            ("no manifest", Self.storedZip(["files/a.c": Data("x".utf8)])),
            ("a member the manifest names is missing", Self.storedZip(["manifest.json": manifest])),
            ("a manifest without code_id", Self.storedZip(["manifest.json": Data("{}".utf8)])),
            ("cut short", Self.storedZip(["manifest.json": manifest, "files/a.c": Data("x".utf8)]).dropLast(30))
        ]
        for (name, bytes) in cases {
            let path = work + "/bundle.zip"
            try bytes.write(to: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try SourceBundle.read(try Data(contentsOf: URL(fileURLWithPath: path))), name)
        }
        let whole = work + "/whole.zip"
        try Self.storedZip(["manifest.json": manifest, "files/a.c": Data("int a;".utf8)]).write(to: URL(fileURLWithPath: whole))
        let read = try SourceBundle.read(try Data(contentsOf: URL(fileURLWithPath: whole)))
        XCTAssertEqual(read.buildID.hex, "0011223344556677")
        XCTAssertEqual(read.files.map(\.path), ["/src/a.c"])
        XCTAssertEqual(read.files.first?.data, Data("int a;".utf8))
    }

    /// A ZIP of stored (uncompressed) members, for hostile-bundle tests.
    static func storedZip(_ files: [String: Data]) -> Data {
        var out = Data(), central = Data()
        func put16(_ d: inout Data, _ v: Int) { d.append(contentsOf: [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)]) }
        func put32(_ d: inout Data, _ v: Int) { put16(&d, v & 0xFFFF); put16(&d, v >> 16 & 0xFFFF) }
        for (name, data) in files.sorted(by: { $0.key < $1.key }) {
            let offset = out.count, n = Data(name.utf8)
            // Local header: signature, version, flags, method (stored), time, date, crc, sizes, name/extra lengths.
            put32(&out, 0x0403_4B50)
            for v in [20, 0, 0, 0, 0] { put16(&out, v) }
            for v in [0, data.count, data.count] { put32(&out, v) }
            put16(&out, n.count); put16(&out, 0)
            out += n + data
            // Central directory entry.
            put32(&central, 0x0201_4B50)
            for v in [20, 20, 0, 0, 0, 0] { put16(&central, v) }
            for v in [0, data.count, data.count] { put32(&central, v) }
            for v in [n.count, 0, 0, 0, 0] { put16(&central, v) }
            put32(&central, 0); put32(&central, offset)
            central += n
        }
        let at = out.count
        out += central
        put32(&out, 0x0605_4B50)
        for v in [0, 0, files.count, files.count] { put16(&out, v) }
        put32(&out, central.count); put32(&out, at); put16(&out, 0)
        return out
    }
}

/// Locates third-party tools installed by tools/setup (pip puts them on PATH or in ~/.local/bin).
enum ThirdParty {
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        var dirs = path.split(separator: ":").map(String.init)
        if let home = ProcessInfo.processInfo.environment["HOME"] { dirs.append(home + "/.local/bin") }
        for d in dirs where FileManager.default.isExecutableFile(atPath: d + "/" + name) { return d + "/" + name }
        return nil
    }

    static func python() -> String? { executable("python3") }

    /// Runs `script` with python3 (the real sentry-sdk installed by tools/setup), the server's
    /// DSN as `sys.argv[1]`; fails the test when it does not exit 0.
    static func runPython(_ script: String, dsn: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let python = try XCTUnwrap(python(), "python3 is not installed", file: file, line: line)
        let dir = TestSupport.makeTemporaryDirectory("sentry-python")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description, file: file, line: line)
    }
}
