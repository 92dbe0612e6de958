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
        let (port, server, token) = try serve.endpoints().parts
        let dsn = server.description, project = server.projectID

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

    /// Where no app will start again to pick the reports up: `faultline crashes SPOOL --send DSN`
    /// delivers them itself, keeps every report while the server cannot be reached, and removes
    /// each one only once the server took its event.
    func testCrashesSendDeliversTheSpoolAndKeepsItWhileTheServerIsUnreachable() throws {
        let work = TestSupport.makeTemporaryDirectory("crashes-send")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let faultline = TestSupport.product("faultline")
        let spool = work + "/spool"
        let program = try KernelCores.build(.c, in: work + "/programs")
        let (core, outcome, pid) = try KernelCores.crash(program, "null", in: work + "/cores")
        let signal = try XCTUnwrap(outcome.signal)
        let handler = try TestSupport.run(
            "/bin/sh", ["-c", "exec '\(faultline)' coredump --spool '\(spool)' \(pid) - \(signal) \(Int(Date().timeIntervalSince1970)) crash < '\(core)'"])
        XCTAssertEqual(handler.exitCode, 0, handler.description)
        let report = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: handler.stdout.trimmingCharacters(in: .whitespacesAndNewlines))))
        let eventID = try XCTUnwrap(report["event_id"]?.stringValue)

        // Nobody listening: the run stops, says so, and keeps the report.
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let unreachable = try TestSupport.run(
            faultline, ["crashes", spool, "--send", "http://0123456789abcdef0123456789abcdef@127.0.0.1:\(refusing.port)/1"], timeout: 60)
        XCTAssertEqual(unreachable.exitCode, 1, unreachable.description)
        XCTAssertTrue(unreachable.stderr.contains("kept for the next run"), unreachable.description)
        XCTAssertEqual(TestSupport.files(in: spool, suffix: ".crash.json").count, 1, "the report stays while the server is unreachable")

        // A real server: the event arrives and the report is removed.
        let serve = try CrashSafetyTests.ServeProcess(dataDir: work + "/server")
        defer { _ = serve.process.end(with: SIGTERM) }
        let (port, server, token) = try serve.endpoints().parts
        let dsn = server.description
        let sent = try TestSupport.run(faultline, ["crashes", spool, "--send", dsn], timeout: 60)
        XCTAssertEqual(sent.exitCode, 0, sent.description)
        XCTAssertTrue(sent.stdout.contains("sent 1 crash event"), sent.description)
        XCTAssertEqual(TestSupport.files(in: spool, suffix: ".crash.json"), [], "the delivered report was removed")
        let project = server.projectID
        let r = RawHTTP.send(
            port: port, method: "GET", path: "/api/0/projects/faultline/\(project)/events/\(eventID)/", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertTrue(r.text.contains("SIGSEGV") && r.text.contains("instruction_addr"), String(r.text.prefix(2000)))
    }
}
