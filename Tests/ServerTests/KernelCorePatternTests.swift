// `faultline coredump` run by the kernel itself: /proc/sys/kernel/core_pattern names it as the pipe
// handler (as docs/COREDUMP.md installs it), unmodified C, C++ and Swift programs crash, and the
// kernel — not the test — starts the handler with the core on its stdin and the `%` specifiers
// expanded. Each report lands in the spool with the crashed program and its signal, names the
// program's own functions when symbolicated, and `faultline crashes --send` delivers the spool to
// a real `faultline serve`.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class KernelCorePatternTests: XCTestCase {
    func testTheKernelRunsThePipeHandlerAndItsReportsArriveAsEvents() throws {
        // core_pattern holds at most 127 bytes: the handler and its spool get a short home.
        let home = "/tmp/flcp-\(getpid())"
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home + "/spool", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createSymbolicLink(atPath: home + "/fl", withDestinationPath: TestSupport.product("faultline"))
        let work = TestSupport.makeTemporaryDirectory("kernel-core-pattern")
        defer { try? FileManager.default.removeItem(atPath: work) }

        let crashes: [(KernelCores.Language, String, symbol: String)] = [
            (.c, "null", "null_dereference"), (.c, "thread", "worker"), (.cxx, "abort", "crashing::giveUp()"), (.swift, "overflow", "main.recurse(Swift.Int)")
        ]
        var programs: [KernelCores.Language: String] = [:]
        for (language, _, _) in crashes where programs[language] == nil {
            programs[language] = try KernelCores.build(language, in: work + "/programs")
        }

        var reports: [(label: String, path: String, signal: Int32, symbol: String, kind: String)] = []
        do {
            let pattern = try KernelCorePattern("|\(home)/fl coredump --spool \(home)/spool %P %i %s %t %e")
            defer { pattern.restore() }
            for (language, kind, symbol) in crashes {
                let label = "\(language.rawValue) \(kind)"
                let outcome = try TestSupport.run(
                    "/bin/sh", ["-c", "ulimit -c unlimited && echo $$ && exec '\(programs[language]!)' \(kind)"],
                    environment: ["SWIFT_BACKTRACE": "enable=no"], timeout: 120)
                let signal = try XCTUnwrap(outcome.signal, "\(label): \(outcome)")
                // The kernel does not wait for the handler to finish: its report appears when it has.
                // (Matched by executable: `%P` is the pid in the initial namespace, which need not
                // be the test's.)
                let report = try XCTUnwrap(
                    Self.awaitReport(of: programs[language]!, in: home + "/spool", besides: reports.map(\.path), timeout: 60),
                    "\(label): no report from the kernel's handler")
                reports.append((label, report, signal, symbol, kind))
            }
        }

        for r in reports {
            let report = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: r.path)))
            XCTAssertEqual(report["core"]?["source"]?.stringValue, "core_pattern", r.label)
            XCTAssertEqual(report["core"]?["incomplete"], nil, "\(r.label): \(report["core"]?.jsonString ?? "")")
            XCTAssertEqual(report["signal"]?["number"]?.int64Value, Int64(r.signal), r.label)
            XCTAssertFalse((report["frames"]?.arrayValue ?? []).isEmpty, "\(r.label): the crashing thread's frames")
            if r.kind == "thread" { XCTAssertGreaterThan(report["threads"]?.arrayValue?.count ?? 0, 1, "\(r.label): every thread") }
            guard !r.symbol.isEmpty else { continue }
            let symbolicated = try TestSupport.run(TestSupport.product("faultline"), ["symbolicate", r.path], timeout: 120)
            XCTAssertEqual(symbolicated.exitCode, 0, "\(r.label): \(symbolicated)")
            XCTAssertTrue(symbolicated.stdout.contains(" in \(r.symbol)"), "\(r.label): \(symbolicated.stdout)")
        }

        let serve = try CrashSafetyTests.ServeProcess(dataDir: work + "/server")
        defer { _ = serve.process.end(with: SIGTERM) }
        let server = try serve.endpoints()
        let ids = try reports.map { r in try XCTUnwrap(JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: r.path)))["event_id"]?.stringValue) }
        let sent = try TestSupport.run(TestSupport.product("faultline"), ["crashes", home + "/spool", "--send", server.dsn.description], timeout: 120)
        XCTAssertEqual(sent.exitCode, 0, sent.description)
        XCTAssertEqual(TestSupport.files(in: home + "/spool", suffix: ".crash.json"), [], "every delivered report was removed")
        for (id, r) in zip(ids, reports) {
            let answer = RawHTTP.send(
                port: server.port, method: "GET", path: "/api/0/projects/faultline/\(server.dsn.projectID)/events/\(id)/",
                headers: ["Authorization": "Bearer \(server.token)"])
            XCTAssertEqual(answer.status, 200, "\(r.label): \(answer.text)")
            XCTAssertTrue(answer.text.contains(r.signal == SIGABRT ? "SIGABRT" : "SIGSEGV"), "\(r.label): \(answer.text.prefix(2000))")
        }
    }

    /// The spooled report of a crash of `executable` not among `seen`, once the handler has renamed
    /// it into place.
    static func awaitReport(of executable: String, in spool: String, besides seen: [String], timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            for path in TestSupport.files(in: spool, suffix: ".crash.json") where !seen.contains(path) {
                if let data = FileManager.default.contents(atPath: path), let report = try? JSONValue.parse(data),
                    report["process"]?["executable"]?.stringValue == executable
                {
                    return path
                }
            }
            usleep(50_000)
        } while Date() < deadline
        return nil
    }
}
