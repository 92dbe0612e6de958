// The receiver against hostile uploads, dedupe, retention, the switch API and `logs top`.
import FaultlineProtocol
import FaultlineServer
import FaultlineTestSupport
import Foundation
import XCTest

final class ArchiveServerTests: XCTestCase {
    var server: ArchiveServer!
    override func tearDown() {
        server?.stop()
        if let d = server?.dataDirectory { try? FileManager.default.removeItem(atPath: d) }
    }

    func testStoresUnderServerChosenNameWithMetadataAndDeduplicatesByChecksum() throws {
        server = try ArchiveServer()
        let body = Corpus.gzip(Corpus.line("2026-12-01T10:00:00.000Z", "INFO", "hello") + Corpus.line("2026-12-01T10:00:01.000Z", "INFO", "again"))
        let r = server.upload(body, name: "app-1.log.gz")
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.headers["x-faultline-log-upload"], "on")
        let again = server.upload(body, name: "other-name.log.gz")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(try JSONValue.parse(again.body)["duplicate"]?.boolValue, true)
        let list = try server.archives()
        XCTAssertEqual(list.count, 1, "stored once")
        XCTAssertEqual(list[0]["name"]?.stringValue, "app-1.log.gz")
        XCTAssertEqual(list[0]["lines"]?.int64Value, 2)
        XCTAssertEqual(list[0]["install_id"]?.stringValue, "install-1")
        XCTAssertEqual(list[0]["release"]?.stringValue, "app@1.0")
        let files = server.storedArchiveFiles()
        XCTAssertEqual(files.count, 1)
        XCTAssertFalse(files[0].contains("app-1"), "the client's name is never part of the path: \(files)")
        let dl = server.get("/api/0/projects/\(server.projectID)/log-archives/\(list[0]["id"]!.stringValue!)/download")
        XCTAssertEqual(dl.status, 200)
        XCTAssertEqual(dl.body, body, "downloads the archive byte for byte")
        XCTAssertEqual(server.get("/api/0/projects/\(server.projectID)/log-archives/").status == 200, true)
        XCTAssertEqual(
            RawHTTP.send(port: server.port, method: "GET", path: "/api/0/projects/\(server.projectID)/log-archives/").status, 401,
            "listing needs a server token")
    }

    func testHostileUploadsAreRefusedWith4xxAndWriteNothing() throws {
        var limits = LogArchiveLimits()
        limits.maxCompressedBytes = 64 * 1024
        limits.maxUncompressedBytes = 1024 * 1024
        server = try ArchiveServer(limits: limits)
        let before = server.filesOutsideArchives()
        let good = Corpus.gzip(Corpus.line("2026-12-01T10:00:00.000Z", "INFO", "x"))
        let names = ["../../etc/passwd", "/etc/passwd", "a%00b.log.gz", String(repeating: "a", count: 4096), "caf%FF.log.gz", "..", "a%2Fb", "%0Aevil"]
        for n in names {
            let r = server.upload(good, name: n)
            XCTAssertEqual(r.status, 400, "name \(n.prefix(40)): \(r.text)")
        }
        var bomb = Data(count: 0)
        bomb = Deflate.gzip(Data(count: 8 * 1024 * 1024), level: 9)!  // 8 MiB of zeros in ~8 KiB
        XCTAssertLessThan(bomb.count, limits.maxCompressedBytes)
        XCTAssertEqual(server.upload(bomb).status, 413, "a gzip bomb stops at the uncompressed cap")
        let truncated = good.prefix(good.count - 6)
        XCTAssertEqual(server.upload(Data(truncated)).status, 400, "truncated gzip")
        XCTAssertEqual(server.upload(Data("not gzip at all, plain text....".utf8)).status, 400)
        XCTAssertEqual(server.upload(good, sha: String(repeating: "0", count: 64)).status, 400, "wrong checksum")
        XCTAssertEqual(server.upload(good, sha: "xyz").status, 400, "malformed checksum")
        XCTAssertEqual(server.upload(Data(count: 70 * 1024)).status, 413, "oversize body")
        XCTAssertEqual(server.upload(good, install: "../x").status, 400, "install id")
        XCTAssertEqual(server.upload(good, extra: ["X-Sentry-Auth": "Sentry sentry_key=00000000000000000000000000000000"]).status, 401)
        XCTAssertEqual(server.upload(good, extra: ["X-Sentry-Auth": "Sentry sentry_key=\(server.token)"]).status, 401, "a server token is no public key")
        XCTAssertEqual(server.storedArchiveFiles(), [], "nothing stored")
        XCTAssertEqual(server.filesOutsideArchives(), before, "nothing written outside log-archives/")
        XCTAssertEqual(try server.archives().count, 0)
        // And the same server still takes a good archive.
        XCTAssertEqual(server.upload(good).status, 200)
    }

    func testRetentionByBytesAndByAgeDeletesOldestRowsAndFiles() throws {
        var limits = LogArchiveLimits()
        limits.maxTotalBytes = 3000
        server = try ArchiveServer(limits: limits)
        for i in 0..<8 {
            // Incompressible-ish bodies of ~1 KiB each.
            let text = (0..<20).map { j in Corpus.line("2026-12-01T10:00:00.000Z", "INFO", "r\(i) \(UUID().uuidString) \(j)") }.joined()
            XCTAssertEqual(server.upload(Corpus.gzip(text)).status, 200)
        }
        XCTAssertGreaterThan(try XCTUnwrap(server.server.logArchives).applyRetention(), 0)
        let left = try server.archives()
        let total = left.compactMap { $0["compressed_bytes"]?.int64Value }.reduce(0, +)
        XCTAssertLessThanOrEqual(total, 3000)
        XCTAssertEqual(server.storedArchiveFiles().count, left.count, "files follow the rows")
        server.stop()
        // Age: reopen with a 1 s age limit; a start runs retention.
        Thread.sleep(forTimeInterval: 1.1)
        var aged = LogArchiveLimits()
        aged.maxAgeSeconds = 1
        let s2 = try ArchiveServer(dataDirectory: server.dataDirectory, limits: aged, keys: (server.publicKey, server.token))
        defer { s2.stop() }
        XCTAssertEqual(try s2.archives().count, 0)
        XCTAssertEqual(s2.storedArchiveFiles(), [])
    }

    func testSwitchRulesMostSpecificWinsAndShowInJSON() throws {
        server = try ArchiveServer()
        let body = Corpus.gzip(Corpus.line("2026-12-01T10:00:00.000Z", "INFO", "x"))
        let base = "/api/0/projects/\(server.projectID)/log-upload/"
        XCTAssertEqual(server.post(base, json: ["enabled": false]).status, 200)
        let off = server.upload(body)
        XCTAssertEqual(off.status, 403)
        XCTAssertEqual(off.headers["x-faultline-log-upload"], "off")
        XCTAssertEqual(server.post(base, json: ["enabled": true, "install": "install-2"]).status, 200)
        XCTAssertEqual(server.upload(body, install: "install-2").status, 200, "an install rule beats the project rule")
        XCTAssertEqual(server.post(base, json: ["enabled": true, "release": "app@2.0"]).status, 200)
        XCTAssertEqual(server.upload(Corpus.gzip("b\n"), release: "app@2.0").status, 200, "a release rule beats the project rule")
        let shown = try JSONValue.parse(server.get(base).body)
        XCTAssertEqual(shown["log_upload"]?.stringValue, "off")
        XCTAssertEqual(shown["rules"]?.arrayValue?.count, 3)
        let probe = RawHTTP.send(
            port: server.port, method: "GET", path: "/api/\(server.projectID)/log-archive/",
            headers: ["X-Sentry-Auth": "Sentry sentry_key=\(server.publicKey)", "X-Faultline-Install-Id": "install-1"])
        XCTAssertEqual(probe.status, 200)
        XCTAssertEqual(probe.headers["x-faultline-log-upload"], "off")
    }

    /// A rule holds what an upload's headers can carry: a value no upload could match is refused,
    /// never stored (issue 29, an oddity: rule values were not length-checked).
    func testSwitchRuleValuesAreCheckedLikeUploadHeaders() throws {
        server = try ArchiveServer()
        let base = "/api/0/projects/\(server.projectID)/log-upload/"
        let refused: [JSONValue] = [
            ["enabled": false, "install": .string(String(repeating: "i", count: 65))], ["enabled": false, "install": "a/b"],
            ["enabled": false, "install": ""], ["enabled": false, "release": .string(String(repeating: "r", count: 201))],
            ["enabled": false, "release": "app\u{1B}[2J"], ["enabled": false, "release": ""]
        ]
        for body in refused {
            let r = server.post(base, json: body)
            XCTAssertEqual(r.status, 400, "\(body.jsonString): \(r.text)")
        }
        XCTAssertEqual(try JSONValue.parse(server.get(base).body)["rules"]?.arrayValue?.count, 0, "nothing stored")
        XCTAssertEqual(server.post(base, json: ["enabled": false, "install": .string(String(repeating: "i", count: 64))]).status, 200)
        XCTAssertEqual(server.post(base, json: ["enabled": false, "release": "app@2.0 (beta) ü"]).status, 200)
    }

    func testNormalisationRules() {
        let cases: [(String, String)] = [
            ("order 17 failed", "order <num> failed"),
            ("order 42 failed", "order <num> failed"),
            ("took 12.5ms at 0x7ffe12ab", "took <num>ms at <hex>"),
            ("user 3F2504E0-4F89-11D3-9A0C-0305E82C3301 logged in", "user <uuid> logged in"),
            ("opened \"/tmp/a b\" and 'x'", "opened \"<str>\" and '<str>'"),
            ("build deadbeef12 ok, v2 sha1", "build <hex> ok, v2 sha1"),
            ("abc123 stays", "abc123 stays")
        ]
        for (input, expected) in cases { XCTAssertEqual(LogLineNormaliser.pattern(input), expected, input) }
    }

    func testLogsTopCountsAKnownCorpusExactlyThroughAPIAndCLI() throws {
        server = try ArchiveServer()
        // Corpus: 3 archives; the expected counts are written down, not computed.
        var a = "", b = "", c = ""
        for i in 0..<30 { a += Corpus.line("2026-12-01T10:00:\(String(format: "%02d", i)).000Z", "ERROR", "order \(i) failed") }
        for i in 0..<20 { b += Corpus.line("2026-12-02T09:00:\(String(format: "%02d", i)).000Z", "ERROR", "order \(100 + i) failed") }
        for i in 0..<15 { b += Corpus.line("2026-12-02T09:01:00.000Z", "INFO", "fetched \"item-\(i)\" in \(i)ms") }
        for i in 0..<7 { c += Corpus.line("2026-12-03T00:00:00.000Z", "WARNING", "retry 0x\(String(i + 4096, radix: 16)) for \(UUID().uuidString)") }
        c += "a stderr line without fields 5\n"
        for body in [a, b, c] { let up = server.upload(Corpus.gzip(body), install: "i-\(body.count)"); XCTAssertEqual(up.status, 200, up.text) }
        let top = try JSONValue.parse(server.get("/api/0/projects/\(server.projectID)/log-archives/top?n=10").body)
        let got = (top["patterns"]?.arrayValue ?? []).map { "\($0["count"]!.int64Value!) \($0["level"]!.stringValue!) \($0["pattern"]!.stringValue!)" }
        XCTAssertEqual(
            got,
            [
                "50 ERROR order <num> failed", "15 INFO fetched \"<str>\" in <num>ms", "7 WARNING retry <hex> for <uuid>",
                "1 - a stderr line without fields <num>"
            ])
        let first = top["patterns"]?[0]
        XCTAssertEqual(first?["first_seen"]?.stringValue, "2026-12-01T10:00:00.000Z")
        XCTAssertEqual(first?["last_seen"]?.stringValue, "2026-12-02T09:00:19.000Z")
        XCTAssertEqual(first?["example"]?.stringValue, "order 0 failed")
        XCTAssertEqual(top["lines"]?.int64Value, 73)

        let warn = try JSONValue.parse(server.get("/api/0/projects/\(server.projectID)/log-archives/top?level=warning").body)
        XCTAssertEqual(warn["patterns"]?.arrayValue?.compactMap { $0["count"]?.int64Value }, [50, 7])

        // The CLI on the same data directory (while the server runs).
        let cli = try TestSupport.run(
            TestSupport.product("faultline"),
            ["logs", "top", "--data-dir", server.dataDirectory, "--since", "2026-12-02T00:00:00Z", "--json"]
                + TestDatabase.serveArguments(dataDirectory: server.dataDirectory))
        XCTAssertEqual(cli.exitCode, 0, cli.description)
        let viaCLI = try JSONValue.parse(Data(cli.stdout.utf8))
        XCTAssertEqual(
            viaCLI["patterns"]?.arrayValue?.map { "\($0["count"]!.int64Value!) \($0["pattern"]!.stringValue!)" },
            ["20 order <num> failed", "15 fetched \"<str>\" in <num>ms", "7 retry <hex> for <uuid>"], "--since drops older lines and field-less ones")
    }
}
