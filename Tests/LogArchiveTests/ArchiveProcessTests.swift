// The SDK in real child processes against a real server: kill -9 during compression and during
// upload, the server down then up, and the remote switch across an SDK restart. Every wait is
// bounded.
import FaultlineProtocol
import FaultlineServer
import FaultlineTestSupport
import Foundation
import XCTest

final class ArchiveProcessTests: XCTestCase {
    let probe = TestSupport.product("faultline-archive-probe")
    var work = ""
    var logDir: String { work + "/logs" }
    var sdkDir: String { work + "/sdk" }
    override func setUp() { work = TestSupport.makeTemporaryDirectory("archive-process") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: work) }

    func start(_ args: [String]) throws -> (Process, String) {
        let out = work + "/out-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: out, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: probe)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        p.standardError = p.standardOutput
        try p.run()
        return (p, out)
    }

    func waitFor(_ what: String, timeout: Double, _ condition: () throws -> Bool) rethrows {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline { if try condition() { return }; usleep(20_000) }
        XCTFail("timed out after \(timeout) s waiting for \(what)")
    }

    func kill9(_ p: Process) { p.end(with: SIGKILL) }

    /// Lines of the server's stored archives (downloaded) for one tag.
    func storedSequence(_ s: ArchiveServer, tag: String) throws -> [Int] {
        var all: [Int] = []
        for a in try s.archives() {
            let body = s.get("/api/0/projects/\(s.projectID)/log-archives/\(a["id"]!.stringValue!)/download").body
            let text = String(decoding: try Inflate.inflate(body, limit: 1 << 30), as: UTF8.self)
            all += Corpus.sequence(text.split(separator: "\n").map(String.init), tag: tag)
        }
        return all.sorted()
    }

    func testKill9DuringCompressionNeitherLosesNorDuplicatesAnArchive() throws {
        // Several runs, each killed at a different moment while rolling every 2 KiB (a gzip and
        // rename every few milliseconds). Each run's lines must appear as a gapless prefix, once.
        let delays = [0.15, 0.3, 0.45, 0.6]
        for (run, delay) in delays.enumerated() {
            let (p, out) = try start(["loop", logDir, "r\(run)", "--roll", "8192"])
            try waitFor("ready", timeout: 20) { (try String(contentsOfFile: out, encoding: .utf8)).contains("ready") }
            Thread.sleep(forTimeInterval: delay)
            kill9(p)
        }
        // A last start compresses every leftover once.
        let (p, out) = try start(["write", logDir, "last", "10"])
        // Generous: under a full parallel test run each archive's two fsyncs can take a while.
        try waitFor("the last run", timeout: 120) { !p.isRunning }
        XCTAssertTrue(try String(contentsOfFile: out, encoding: .utf8).contains("written"))
        let names = try FileManager.default.contentsOfDirectory(atPath: logDir)
        XCTAssertEqual(names.filter { $0.hasSuffix(".tmp") }, [], "no half-written archive survives a start")
        let lines = try Corpus.lines(inFolder: logDir)
        for run in delays.indices {
            let seq = Corpus.sequence(lines, tag: "r\(run)").sorted()
            XCTAssertGreaterThan(seq.count, 50, "run \(run) wrote something")
            XCTAssertEqual(seq, Array(0..<seq.count), "run \(run): every line once, no gap before the kill")
        }
    }

    func testKill9DuringUploadStoresEveryArchiveExactlyOnce() throws {
        let server = try ArchiveServer()
        defer { server.stop() }
        let n = 4000
        // Small archives (~1 KiB, a few hundred) so uploading them takes a while. The kill comes
        // once every line is in an archive ("written"): lines still queued in memory at a kill
        // are lost by design, archives must not be.
        let (p, out0) = try start(["upload", logDir, sdkDir, server.dsn, "k", String(n), "--roll", "1024"])
        try waitFor("all lines archived", timeout: 60) { (try String(contentsOfFile: out0, encoding: .utf8)).contains("written") || !p.isRunning }
        try waitFor("uploads to begin", timeout: 30) { (try server.archives().count) >= 5 || !p.isRunning }
        kill9(p)
        let atKill = try server.archives().count
        let total = try FileManager.default.contentsOfDirectory(atPath: logDir).filter { $0.hasSuffix(".log.gz") }.count + atKill
        print("kill -9 with \(atKill) of about \(total) archives stored")
        XCTAssertLessThan(atKill, total, "the kill should land while archives are still waiting")
        // The restart uploads what is left (and perhaps one the server already has: deduplicated).
        let (q, out) = try start(["upload", logDir, sdkDir, server.dsn, "k2", "0", "--wait", "40"])
        try waitFor("the restart to finish", timeout: 60) { !q.isRunning }
        let text = try String(contentsOfFile: out, encoding: .utf8)
        XCTAssertTrue(text.contains("uploaded"), text)
        let stored = try storedSequence(server, tag: "k")
        XCTAssertEqual(stored, Array(0..<n), "all \(n) lines stored, none twice")
    }

    func testServerDownThenUpLeftoversArrive() throws {
        // The server comes back on the port its DSN names, which is free while it is down: another
        // process may take it then. The restart's bind failing with "address in use" starts the
        // whole case over (fresh directories, the first server again on a port of the kernel's
        // choosing), a bounded number of times; any other failure fails the test.
        try LoopbackPort.retryingLostBinds(attempts: 3) { try serverDownThenUp() }
    }

    /// One run of `testServerDownThenUpLeftoversArrive`; throws `LoopbackPort.Lost` when the restart
    /// could not have its port back.
    func serverDownThenUp() throws {
        for d in [logDir, sdkDir] { try? FileManager.default.removeItem(atPath: d) }
        let first = try ArchiveServer()
        let keys = (first.publicKey, first.token), dsn = first.dsn, dir = first.dataDirectory, port = first.port
        first.stop()
        // Server down: archives stay on disk.
        let (p, out) = try start(["upload", logDir, sdkDir, dsn, "d", "500", "--roll", "4096", "--wait", "3"])
        try waitFor("the offline run", timeout: 40) { !p.isRunning }
        let text = try String(contentsOfFile: out, encoding: .utf8)
        XCTAssertTrue(text.contains("left "), text)
        XCTAssertTrue(text.contains("dropped 0"), "an unreachable server loses nothing: \(text)")
        // Server up again on the same port and data: the next start uploads the leftovers.
        let second: ArchiveServer
        do {
            second = try ArchiveServer(dataDirectory: dir, port: port, keys: keys)
        } catch HTTPServer.StartError.cannotListen(_, _, let e) where e == EADDRINUSE {
            try? FileManager.default.removeItem(atPath: dir)
            throw LoopbackPort.Lost(port: port, detail: "the restarted server could not listen again")
        }
        defer { second.stop(); try? FileManager.default.removeItem(atPath: dir) }
        let (q, out2) = try start(["upload", logDir, sdkDir, dsn, "d2", "0", "--wait", "40"])
        try waitFor("the second run", timeout: 60) { !q.isRunning }
        XCTAssertTrue(try String(contentsOfFile: out2, encoding: .utf8).contains("uploaded"))
        XCTAssertEqual(try storedSequence(second, tag: "d"), Array(0..<500))
    }

    func testRemoteSwitchOffThenOnAcrossAnSDKRestart() throws {
        let server = try ArchiveServer()
        defer { server.stop() }
        let rules = "/api/0/projects/\(server.projectID)/log-upload/"
        XCTAssertEqual(server.post(rules, json: ["enabled": false, "release": "probe@1.0"]).status, 200)
        let (p, out) = try start(["upload", logDir, sdkDir, server.dsn, "s", "300", "--roll", "4096", "--wait", "3", "--recheck", "0.5"])
        try waitFor("the first run", timeout: 40) { !p.isRunning }
        XCTAssertTrue(try String(contentsOfFile: out, encoding: .utf8).contains("left "))
        XCTAssertEqual(try String(contentsOfFile: logDir + "/.upload-state", encoding: .utf8), "off", "the switch is persisted")
        XCTAssertEqual(try server.archives().count, 0)
        // Restart with the switch still off: nothing goes.
        let (q, out2) = try start(["upload", logDir, sdkDir, server.dsn, "s2", "0", "--wait", "2", "--recheck", "0.5"])
        try waitFor("the second run", timeout: 40) { !q.isRunning }
        XCTAssertTrue(try String(contentsOfFile: out2, encoding: .utf8).contains("left "))
        XCTAssertEqual(try server.archives().count, 0, "off holds across the restart")
        // On again (the CLI flips it): the next start learns it and uploads what was kept.
        let cli = try TestSupport.run(
            TestSupport.product("faultline"),
            ["logs", "switch", "on", "--release", "probe@1.0", "--data-dir", server.dataDirectory]
                + TestDatabase.serveArguments(dataDirectory: server.dataDirectory))
        XCTAssertEqual(cli.exitCode, 0, cli.description)
        let (r, out3) = try start(["upload", logDir, sdkDir, server.dsn, "s3", "0", "--wait", "40", "--recheck", "0.5"])
        try waitFor("the third run", timeout: 60) { !r.isRunning }
        XCTAssertTrue(try String(contentsOfFile: out3, encoding: .utf8).contains("uploaded"))
        XCTAssertEqual(try storedSequence(server, tag: "s"), Array(0..<300))
        XCTAssertEqual(try String(contentsOfFile: logDir + "/.upload-state", encoding: .utf8), "on")
    }
}
