// The thin CLI over the server library: `faultline projects` on a data directory, `serve --help`.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class CLITests: XCTestCase {
    func testProjectsCommandCreatesListsAndKeys() throws {
        let exe = TestSupport.product("faultline")
        let dir = TestSupport.makeTemporaryDirectory("faultline-cli")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try TestDatabase.serveArguments(dataDirectory: dir)  // the same database the server below opens
        // No data yet: an input error, not a crash.
        XCTAssertEqual(try TestSupport.run(exe, ["projects", "--data-dir", dir + "/none", "list"]).exitCode, 3)

        let created = try TestSupport.run(
            exe, ["projects", "--data-dir", dir] + db + ["--url", "http://127.0.0.1:9999", "create", "My App", "--app-id", "com.example.app"])
        XCTAssertEqual(created.exitCode, 0, created.description)
        let dsnLine = try XCTUnwrap(created.stdout.split(separator: "\n").first { $0.hasPrefix("DSN: ") })
        let dsn = try DSN(parsing: String(dsnLine.dropFirst(5)))
        XCTAssertEqual(dsn.publicKey.value.count, 32)
        XCTAssertEqual(dsn.hostAndPort, "127.0.0.1:9999")

        let list = try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["list"])
        XCTAssertTrue(list.stdout.contains("my-app"), list.description)
        let keys = try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["keys", "my-app", "--create"])
        XCTAssertEqual(keys.stdout.split(separator: "\n").count, 2, keys.description)
        XCTAssertTrue(keys.stdout.contains("com.example.app"))
        let token = try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["token", "create", "ci"])
        XCTAssertTrue(token.stdout.hasPrefix(ServerToken.prefix), token.description)

        // A server on that directory accepts the CLI-made token and the key's DSN (with its app id).
        let config = try ServerConfiguration.test(dataDirectory: dir)
        let server = try Server(config: config)
        XCTAssertNil(server.bootstrap, "projects exist: nothing is created on start")
        try server.start()
        defer { server.stop() }
        let t = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/api/0/projects/", headers: ["Authorization": "Bearer \(t)"]).status, 200)
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
            headers: ["X-Sentry-Auth": dsn.authHeader(client: "cli-test/1")],
            body: TestEvents.envelope(TestEvents.native(offsets: [1], appID: "com.example.app")))
        XCTAssertEqual(r.status, 200, r.text)

        // Revoked with the CLI: listed no more, and refused by a server that looks them up.
        let tokens = try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["token", "list"])
        XCTAssertTrue(tokens.stdout.contains("\t" + "ci\t") && tokens.stdout.contains(String(t.prefix(9)) + "…"), tokens.description)
        XCTAssertFalse(tokens.stdout.contains(t), "never the token itself")
        XCTAssertEqual(try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["token", "revoke", "ci"]).exitCode, 0)
        XCTAssertEqual(try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["token", "revoke", "ci"]).exitCode, 3, "none left")
        XCTAssertEqual(try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["key", "revoke", dsn.publicKey.value]).exitCode, 0)
        XCTAssertEqual(try TestSupport.run(exe, ["projects", "--data-dir", dir] + db + ["key", "revoke", dsn.publicKey.value]).exitCode, 3)
        server.stop()
        let again = try Server(config: config)
        try again.start()
        defer { again.stop() }
        XCTAssertEqual(RawHTTP.send(port: again.port, method: "GET", path: "/api/0/projects/", headers: ["Authorization": "Bearer \(t)"]).status, 401)
        let refused = RawHTTP.send(
            port: again.port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
            headers: ["X-Sentry-Auth": dsn.authHeader(client: "cli-test/1")],
            body: TestEvents.envelope(TestEvents.native(offsets: [1], appID: "com.example.app")))
        XCTAssertEqual(refused.status, 401, refused.text)
    }

    /// A key or token this process looked up is trusted for `CredentialLifetime.seconds`, then
    /// looked up again: a revocation in another process is honoured within that time.
    func testCachedCredentialsAreLookedUpAgainAfterTheirLifetime() {
        let cache = CredentialCache()
        let record = PublicKeyRecord(key: PublicKey("0123456789abcdef0123456789abcdef"), projectID: 1, allowedAppIDs: [])
        cache.remember(record, now: 1_000)
        XCTAssertEqual(cache.key(record.key.value, now: 1_000 + CredentialLifetime.seconds - 1), record)
        XCTAssertNil(cache.key(record.key.value, now: 1_000 + CredentialLifetime.seconds + 1), "looked up again")
        cache.rememberToken("hash", now: 1_000)
        XCTAssertTrue(cache.knowsToken("hash", now: 1_001))
        XCTAssertFalse(cache.knowsToken("hash", now: 1_000 + CredentialLifetime.seconds + 1))
    }

    func testServeHelpAndBadFlags() throws {
        let exe = TestSupport.product("faultline")
        let help = try TestSupport.run(exe, ["serve", "--help"])
        XCTAssertEqual(help.exitCode, 0)
        XCTAssertTrue(help.stdout.contains("--data-dir"))
        XCTAssertEqual(try TestSupport.run(exe, ["serve", "--port", "notaport"]).exitCode, 2)
        XCTAssertEqual(try TestSupport.run(exe, ["upload", "--help"]).exitCode, 0)
    }

    func testServeTakesDEBUGINFOD_URLSUnlessAnUpstreamIsNamed() throws {
        let dir = TestSupport.makeTemporaryDirectory("serve-debuginfod-env")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func banner(_ extra: [String], environment: [String: String]) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: TestSupport.product("faultline"))
            p.arguments = ["serve", "--data-dir", dir + "/data", "--port", "0"] + (try TestDatabase.serveArguments(dataDirectory: dir + "/data")) + extra
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let out = dir + "/out-\(UUID().uuidString.prefix(6))"
            FileManager.default.createFile(atPath: out, contents: nil)
            p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            p.standardError = FileHandle.nullDevice
            try p.run()
            let deadline = Date().addingTimeInterval(30)
            var text = ""
            while Date() < deadline && !text.contains("listening on") {
                usleep(20_000)
                text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            }
            // SIGTERM the moment the banner is out (as a supervisor may): a clean stop, never ignored.
            XCTAssertEqual(p.end(with: SIGTERM), ProcessEnd(exitCode: 0, signal: nil), "serve stops on SIGTERM right after its banner")
            text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            XCTAssertTrue(text.hasSuffix("faultline server stopping\n"), text)
            return text
        }
        let fromEnv = try banner([], environment: ["DEBUGINFOD_URLS": "http://127.0.0.1:1/a ftp://ignored https://127.0.0.1:1/b"])
        XCTAssertTrue(fromEnv.contains("debuginfod upstreams: http://127.0.0.1:1/a https://127.0.0.1:1/b"), fromEnv)
        let named = try banner(["--debuginfod-upstream", "http://127.0.0.1:1/named"], environment: ["DEBUGINFOD_URLS": "http://127.0.0.1:1/a"])
        XCTAssertTrue(named.contains("debuginfod upstreams: http://127.0.0.1:1/named\n"), named)
    }
}
