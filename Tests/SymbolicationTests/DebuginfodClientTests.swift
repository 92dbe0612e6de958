// `faultline symbolicate` with DEBUGINFOD_URLS: a real elfutils debuginfod on 127.0.0.1 serves the
// debug file of a binary that has none locally; libdebuginfod caches it under --cache-dir.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport
@testable import FaultlineSymbolication

final class DebuginfodClientTests: XCTestCase {
    func testSymbolicateFetchesTheDebugFileFromDebuginfodAndCachesIt() throws {
        let d = try Fixtures.directory()
        let served = Fixtures.temporaryDirectory("debuginfod-served")
        let cache = Fixtures.temporaryDirectory("debuginfod-cli-cache")
        defer { for p in [served, cache] { try? FileManager.default.removeItem(atPath: p) } }
        try FileManager.default.copyItem(atPath: "\(d)/c-O2.debug", toPath: served + "/c-O2.debug")
        let id = try XCTUnwrap(try ELFInfo.read(path: "\(d)/c-O2.full").buildID)
        guard let upstream = try ElfutilsDebuginfod(serving: served) else {
            throw TestSupport.ShellError(command: "debuginfod", output: "not installed; tools/setup and .ci/run install it")
        }
        var stopped = false
        defer { if !stopped { upstream.stop() } }
        XCTAssertTrue(upstream.waitUntilServes(id), upstream.log)

        let addr = "0x" + String(try XCTUnwrap(try Fixtures.markers("c-O2")["c_outer"]), radix: 16)
        var env = ProcessInfo.processInfo.environment
        env["DEBUGINFOD_CACHE_PATH"] = nil
        env["DEBUGINFOD_URLS"] = upstream.url
        func run(_ extra: [String] = [], env: [String: String]) -> Fixtures.RunResult {
            Fixtures.run(
                Fixtures.faultlineBinary, ["symbolicate", "--cache-dir", cache, "--no-cache", "--no-system", "--obj", "\(d)/c-O2.bare", addr] + extra,
                environment: env)
        }
        let expected = Fixtures.run(Fixtures.faultlineBinary, ["symbolicate", "--no-cache", "--no-system", "--obj", "\(d)/c-O2.full", addr]).stdout
        XCTAssertTrue(expected.contains("inline_chain.c:"), expected)

        var noURLs = env; noURLs["DEBUGINFOD_URLS"] = nil
        XCTAssertFalse(run(env: noURLs).stdout.contains("inline_chain.c"), "without DEBUGINFOD_URLS the stripped binary has no lines")
        XCTAssertFalse(run(["--no-debuginfod"], env: env).stdout.contains("inline_chain.c"), "--no-debuginfod asks no server")

        let fetched = run(env: env)
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertEqual(fetched.stdout, expected, "the fetched debug file answers as the unstripped binary does")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(cache)/debuginfod/\(id.hex)/debuginfo"), "cached under --cache-dir/debuginfod")

        // The server is gone: the cached file still answers.
        upstream.stop(); stopped = true
        XCTAssertEqual(run(env: env).stdout, expected)
    }

    func testNotFoundIsCachedByTheClientForItsRetryInterval() throws {
        let served = Fixtures.temporaryDirectory("debuginfod-empty")
        let cache = Fixtures.temporaryDirectory("debuginfod-neg-cache")
        defer { for p in [served, cache] { try? FileManager.default.removeItem(atPath: p) } }
        guard let upstream = try ElfutilsDebuginfod(serving: served) else {
            throw TestSupport.ShellError(command: "debuginfod", output: "not installed; tools/setup and .ci/run install it")
        }
        defer { upstream.stop() }
        XCTAssertTrue(upstream.waitUntilUp(), upstream.log)
        let id = BuildID(bytes: Array(repeating: 0xab, count: 20))
        let client = DebuginfodClient(urls: [upstream.url], cacheDirectory: cache, timeoutSeconds: 5, negativeRetrySeconds: 600)
        XCTAssertEqual(client.debugInfo(id), .notFound)
        // Served by nobody now (a port that refuses): the fresh negative answer comes from the cache, not a failure.
        let refused = try RefusingPort()
        defer { refused.close() }
        let dead = DebuginfodClient(urls: [refused.url], cacheDirectory: cache, timeoutSeconds: 5)
        XCTAssertEqual(dead.debugInfo(id), .notFound, "a fresh negative answer is not asked again")
        let unknown = BuildID(bytes: Array(repeating: 0xcd, count: 20))
        guard case .failed = dead.debugInfo(unknown) else { return XCTFail("no server answered: a failure, not 'not found'") }
    }
}
