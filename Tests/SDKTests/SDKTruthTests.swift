// What the SDK answers must be true, in a real child process: flush says whether the server
// took everything, capture says whether the event is on disk, a second start says it changed
// nothing, and a malformed DSN still leaves crash capture on.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest

final class SDKTruthTests: XCTestCase {
    var dataDir = ""
    let crasher = TestSupport.product("faultline-crasher")
    override func setUp() { dataDir = TestSupport.makeTemporaryDirectory("sdk-truth") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dataDir) }

    func run(_ mode: String, dsn: String?, dataDirectory: String? = nil, _ extra: [String] = []) throws -> TestSupport.Outcome {
        var args = [mode, "--data-dir", dataDirectory ?? dataDir] + extra
        if let dsn { args += ["--dsn", dsn] }
        return try TestSupport.run(crasher, args, environment: ["SWIFT_BACKTRACE": "enable=no"])
    }

    /// The last line of stdout, a JSON object.
    func lastJSON(_ o: TestSupport.Outcome) throws -> JSONValue {
        try JSONValue.parse(Data(String(o.stdout.split(separator: "\n").last ?? "").utf8))
    }

    func testFlushIsFalseWhileWhatWasQueuedStaysInTheOutbox() throws {
        let refused = try RefusingPort()
        defer { refused.close() }
        let o = try run("capture-and-flush", dsn: "http://0123456789abcdef0123456789abcdef@127.0.0.1:\(refused.port)/1", ["--count", "5"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertTrue(o.stdout.contains("flush false"), o.stdout)
        XCTAssertGreaterThanOrEqual(try lastJSON(o)["pending"]?.int64Value ?? 0, 5, "the five events wait in the outbox")
    }

    func testFlushIsTrueOnceTheServerTookEverything() throws {
        let server = try ScriptedHTTPServer()
        defer { server.stop() }
        let o = try run("capture-and-flush", dsn: server.dsn(), ["--count", "5", "--timeout", "30"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertTrue(o.stdout.contains("flush true"), o.stdout)
        XCTAssertEqual(try lastJSON(o)["pending"]?.int64Value, 0)
    }

    func testARefusedKeyIsSaidOnceShownInTheStatusAndFlushIsFalse() throws {
        let server = try ScriptedHTTPServer { _ in .status(401, body: #"{"detail":"unknown key"}"#) }
        defer { server.stop() }
        let o = try run("capture-and-flush", dsn: server.dsn(key: "feedfacefeedfacefeedfacefeedface"), ["--count", "5"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertEqual(o.stderr.components(separatedBy: "refused the DSN's key").count - 1, 1, o.stderr)
        XCTAssertTrue(o.stderr.contains("feedface… (HTTP 401)"), o.stderr)
        XCTAssertFalse(o.stderr.contains("feedfacefeedface"), "never the whole key")
        XCTAssertTrue(o.stdout.contains("flush false"), o.stdout)
        let status = try lastJSON(o)
        XCTAssertEqual(status["rejected_key_status"]?.int64Value, 401)
        XCTAssertEqual(status["rejected_key_prefix"]?.stringValue, "feedface")
        XCTAssertGreaterThanOrEqual(status["rejected_by_server"]?.int64Value ?? 0, 5)
    }

    func testASecondStartSaysSoOnceAndChangesNothing() throws {
        let o = try run("start-twice", dsn: nil)
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertEqual(o.stderr.components(separatedBy: "Faultline.start was called again").count - 1, 1, o.stderr)
        let again = try lastJSON(o)
        XCTAssertEqual(again["crash_handler_installed"]?.boolValue, true, "the first start's result")
        XCTAssertEqual(again["data_directory"]?.stringValue, dataDir, "the first start's data directory stays in use")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dataDir + "/other"))
    }

    func testCaptureOnAFullDiskReturnsNilAndCountsTheLoss() throws {
        let mnt = dataDir + "/tiny"
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        guard getuid() == 0, (try? TestSupport.shell("mount -t tmpfs -o size=300k tmpfs '\(mnt)'")) != nil else {
            throw XCTSkip("mounting a small tmpfs is not permitted here")
        }
        defer { _ = try? TestSupport.shell("umount '\(mnt)'") }
        let o = try run("capture-full-disk", dsn: nil, dataDirectory: mnt + "/data", ["--fill", mnt + "/filler"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        XCTAssertTrue(o.stdout.contains("not captured"), o.stdout)
        XCTAssertTrue(o.stdout.contains("disk_write_failed 1"), o.stdout)
    }
}
