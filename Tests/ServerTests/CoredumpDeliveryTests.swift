// The core_pattern pipe handler end to end: kernel cores of unmodified C, C++ and Swift programs
// (null dereference, abort, stack overflow, a crash on a second thread) fed on stdin to
// `faultline coredump` as the kernel would, its reports spooled into an app's crash directory,
// the SDK's next-launch pickup sending them to a real `faultline serve` on 127.0.0.1: every crash
// arrives as an event with its signal, its crashing thread's frames and every thread.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class CoredumpDeliveryTests: XCTestCase {
    func testPipeHandlerReportsOfKernelCoresArriveAsEvents() throws {
        let work = TestSupport.makeTemporaryDirectory("coredump-delivery")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let serve = try CrashSafetyTests.ServeProcess(dataDir: work + "/server")
        defer { _ = serve.process.end(with: SIGTERM) }
        let banner = try serve.banner()
        let port = try XCTUnwrap(serve.port(banner))
        let dsn = try XCTUnwrap(banner.split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)
        let token = String(try XCTUnwrap(banner.split(separator: "\n").first { $0.contains("server token") }).split(separator: " ").last!)
        let project = try DSN(parsing: String(dsn)).projectID

        let faultline = TestSupport.product("faultline")
        let app = work + "/app"
        struct Expected { var label: String; var signal: Int32; var kind: String }
        var expected: [String: Expected] = [:]
        for language in KernelCores.Language.allCases {
            let program = try KernelCores.build(language, in: work + "/programs")
            for kind in KernelCores.crashKinds {
                let label = "\(language.rawValue) \(kind)"
                let (core, outcome, pid) = try KernelCores.crash(program, kind, in: work + "/cores")
                let signal = try XCTUnwrap(outcome.signal, label)
                // As core_pattern calls it: |faultline coredump --spool DIR %P %i %s %t %e (the
                // crashing thread's id is the notes' first thread here: "-").
                let handler = try TestSupport.run(
                    "/bin/sh",
                    [
                        "-c",
                        "exec '\(faultline)' coredump --spool '\(app)/crashes' --keep-core 64M \(pid) - \(signal) \(Int(Date().timeIntervalSince1970)) crash < '\(core)'"
                    ])
                XCTAssertEqual(handler.exitCode, 0, "\(label): \(handler)")
                let reportPath = handler.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let report = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: reportPath)))
                XCTAssertEqual(report["process"]?["pid"]?.int64Value, Int64(pid), label)
                XCTAssertNotNil(report["core"]?["kept_core"]?.stringValue, "\(label): \(report["core"]?.jsonString ?? "")")
                XCTAssertEqual(report["core"]?["incomplete"], nil, label)
                expected[try XCTUnwrap(report["event_id"]?.stringValue)] = Expected(label: label, signal: signal, kind: kind)
                // The kept core is the whole core, byte for byte.
                let kept = try XCTUnwrap(report["core"]?["kept_core"]?.stringValue)
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: kept)), try Data(contentsOf: URL(fileURLWithPath: core)), label)
                try FileManager.default.removeItem(atPath: kept)
            }
        }
        XCTAssertEqual(expected.count, 12)

        // The SDK's next launch picks the reports up from its crash directory and sends them.
        let flush = try TestSupport.run(
            TestSupport.product("faultline-crasher"), ["flush", "--data-dir", app, "--dsn", String(dsn)], environment: ["SWIFT_BACKTRACE": "enable=no"],
            timeout: 90)
        XCTAssertEqual(flush.exitCode, 0, flush.description)
        let summary = try JSONValue.parse(Data((flush.stdout.split(separator: "\n").first ?? "").utf8))
        XCTAssertEqual(Set((summary["converted"]?.arrayValue ?? []).compactMap(\.stringValue)), Set(expected.keys), "the pickup converted every report")
        XCTAssertTrue(flush.stdout.contains("flushed"), flush.description)
        XCTAssertEqual(TestSupport.files(in: app + "/crashes", suffix: ".crash.json"), [], "every report was delivered and removed")

        for (id, e) in expected {
            let r = RawHTTP.send(
                port: port, method: "GET", path: "/api/0/projects/faultline/\(project)/events/\(id)/", headers: ["Authorization": "Bearer \(token)"])
            XCTAssertEqual(r.status, 200, "\(e.label): \(r.text)")
            guard r.status == 200 else { continue }
            let event = try JSONValue.parse(r.body)
            let text = event.jsonString
            XCTAssertTrue(text.contains(e.signal == SIGABRT ? "SIGABRT" : "SIGSEGV"), "\(e.label): \(text.prefix(2000))")
            XCTAssertTrue(text.contains("instruction_addr"), "\(e.label): the crashing thread's frames arrived")
            if e.kind == "thread" { XCTAssertTrue(text.contains("\"crashed\":false"), "\(e.label): the other threads arrived too") }
        }
    }
}
