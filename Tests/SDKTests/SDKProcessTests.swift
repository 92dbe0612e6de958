// The SDK in a real child process talking HTTP to a real server on 127.0.0.1.
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import Synchronization
import XCTest

final class SDKProcessTests: XCTestCase {
    var dataDir = ""
    let crasher = TestSupport.product("faultline-crasher")
    override func setUp() { dataDir = TestSupport.makeTemporaryDirectory("sdk") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dataDir) }

    func run(_ mode: String, dsn: String?, _ extra: [String] = []) throws -> TestSupport.Outcome {
        var args = [mode, "--data-dir", dataDir] + extra
        if let dsn { args += ["--dsn", dsn] }
        return try TestSupport.run(crasher, args, environment: ["SWIFT_BACKTRACE": "enable=no"])
    }

    /// Starts the crasher in `log-and-wait` mode and returns once it has started the SDK and logged.
    func startWaitingInstance(_ server: ScriptedHTTPServer) throws -> Process {
        let out = dataDir + "/stdout-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: out, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: crasher)
        p.arguments = ["log-and-wait", "--data-dir", dataDir, "--dsn", server.dsn()]
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        try p.run()
        for _ in 0..<200 where !((try? String(contentsOfFile: out, encoding: .utf8))?.contains("ready") ?? false) { usleep(20_000) }
        return p
    }

    func items(_ server: ScriptedHTTPServer, type: String) -> [JSONValue] {
        server.requests.compactMap { try? Envelope.parse($0.body) }.flatMap(\.items).filter { $0.type == type }
            .compactMap { try? JSONValue.parse($0.payload) }
    }

    func testExitIsNotHeldByARefusedOrStalledServerAndNothingIsLost() throws {
        // A port that refuses (bound by us, never listening), and a server that accepts and never answers.
        let refused = try RefusingPort()
        defer { refused.close() }
        let refusedPort = refused.port
        let stalled = try StalledServer()
        defer { stalled.close() }
        let stalledPort = stalled.port

        for (name, port) in [("refused", refusedPort), ("stalled", stalledPort)] {
            try? FileManager.default.removeItem(atPath: dataDir)
            let o = try run("log-and-exit", dsn: "http://0123456789abcdef0123456789abcdef@127.0.0.1:\(port)/1")
            XCTAssertEqual(o.exitCode, 0, "\(name): \(o)")
            // Before: the at-exit flush retried with back-off until its 2 s timeout (and waited on a
            // stalled request). Now one quick attempt (0.5 s at most) and the rest stays queued.
            XCTAssertLessThan(o.duration, 1.5, "\(name): exit waited \(o.duration) s")
            let queued = TestSupport.files(in: dataDir + "/outbox", suffix: ".envelope")
            XCTAssertFalse(queued.isEmpty, "\(name): the captured error and the session end stay durable for the next launch")
        }
    }

    /// A program that returns from main within milliseconds of start (a CLI, a cron job) exits
    /// cleanly while start's background half is still setting up libcurl and OpenSSL: OpenSSL's
    /// atexit clean-up, registered from that thread, once ran first and crashed it (SIGSEGV in
    /// OPENSSL_init_ssl under curl_global_init, in a few runs of a hundred) — and the next launch
    /// reported the SDK's own crash as the app's. The probe imports nothing but the SDK, as an app.
    func testReturningFromMainRightAfterStartIsClean() throws {
        let refused = try RefusingPort()
        defer { refused.close() }
        let dsn = "http://0123456789abcdef0123456789abcdef@127.0.0.1:\(refused.port)/1"
        let probe = TestSupport.product("faultline-log-probe")
        for run in 0..<120 {
            let micros = [1000, 2000, 2500, 3000, 3500, 4000][run % 6]
            let o = try TestSupport.run(probe, ["start-then-return", dsn, dataDir, String(micros)])
            XCTAssertNil(o.signal, "run \(run), \(micros) µs: \(o)")
            XCTAssertEqual(o.exitCode, 0, "run \(run): \(o)")
        }
        XCTAssertTrue(TestSupport.files(in: dataDir + "/crashes", suffix: ".crash.json").isEmpty, "no crash of the SDK's own to report")
    }

    /// A burst of logs over the outbox's cap: flush says false (it said true with thousands of
    /// the lines logged before it lost), and the session's opening update still reaches the server
    /// (the burst evicted it: the server never counted the session).
    func testALogBurstOverTheQueueCapMakesFlushFalseAndKeepsTheSessionStart() throws {
        let server = try ScriptedHTTPServer()
        let o = try run("log-burst-and-flush", dsn: server.dsn(), ["--count", "2000", "--queue-bytes", "60000"])
        XCTAssertEqual(o.exitCode, 0, o.description)
        let line = try XCTUnwrap(o.stdout.split(separator: "\n").first { $0.hasPrefix("flush ") }, o.description)
        let lost = Int(line.split(separator: " ").last ?? "") ?? 0
        XCTAssertGreaterThan(lost, 0, "the burst overflowed the outbox: \(line)")
        XCTAssertTrue(line.hasPrefix("flush false"), "lines logged before the call were lost: \(line)")
        let sessions = items(server, type: "session")
        XCTAssertTrue(sessions.contains { $0["init"]?.boolValue == true }, "the session's opening update arrived: \(sessions)")
    }

    /// Two instances of one program share its outbox: what an earlier run left there is sent once,
    /// not once by each (each scanned the outbox at start and sent it all: the lines were stored
    /// twice).
    func testTwoInstancesSharingAnOutboxSendWhatAnEarlierRunLeftOnce() throws {
        let failing = Atomic<Bool>(true)
        let server = try ScriptedHTTPServer { _ in failing.load(ordering: .relaxed) ? .status(500) : .slow(seconds: 0.2, then: 200) }
        let first = try run("log-and-exit", dsn: server.dsn())
        XCTAssertEqual(first.exitCode, 0, first.description)
        let eventID = try XCTUnwrap(first.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        let left = TestSupport.files(in: dataDir + "/outbox", suffix: ".envelope")
        XCTAssertGreaterThanOrEqual(left.count, 2, "the refused run left its envelopes queued")

        let refused = server.requests.filter { $0.path.hasSuffix("/envelope/") }.count
        failing.store(false, ordering: .relaxed)
        let instances = try (0..<2).map { _ -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: crasher)
            p.arguments = ["flush", "--data-dir", dataDir, "--dsn", server.dsn()]
            p.environment = ["SWIFT_BACKTRACE": "enable=no"]
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            return p
        }
        for p in instances { XCTAssertEqual(p.awaitEnd().exitCode, 0) }
        let bodies = server.requests.filter { $0.path.hasSuffix("/envelope/") }.dropFirst(refused).map(\.body)
        let withTheEvent = bodies.filter { (try? Envelope.parse($0))?.eventID == eventID }
        XCTAssertEqual(withTheEvent.count, 1, "the earlier run's event is sent once")
        let withItsLines = bodies.filter { String(decoding: $0, as: UTF8.self).contains("an info line") }
        XCTAssertEqual(withItsLines.count, 1, "its log lines are sent once")
    }

    func testLogsCapturedErrorAndSessionReachTheServerWithInstallAndAppID() throws {
        let server = try ScriptedHTTPServer()
        let o = try run("log-and-exit", dsn: server.dsn())
        XCTAssertEqual(o.exitCode, 0, o.description)
        let capturedID = try XCTUnwrap(o.stdout.split(separator: "\n").first { $0.hasPrefix("captured ") }?.split(separator: " ").last.map(String.init))

        let event = try XCTUnwrap(items(server, type: "event").first)
        XCTAssertEqual(event["event_id"]?.stringValue, capturedID)
        XCTAssertEqual(event["level"]?.stringValue, "error")
        let exc = try XCTUnwrap(event["exception"]?["values"]?[0])
        XCTAssertTrue(exc["type"]?.stringValue?.hasSuffix("CrasherError") == true)
        XCTAssertEqual(exc["value"]?.stringValue, "crasher error #7")
        XCTAssertFalse(exc["stacktrace"]?["frames"]?.arrayValue?.isEmpty ?? true, "the capturing thread's stack")
        XCTAssertFalse(event["debug_meta"]?["images"]?.arrayValue?.isEmpty ?? true)
        let crumbs = event["breadcrumbs"]?["values"]?.arrayValue?.compactMap { $0["message"]?.stringValue } ?? []
        XCTAssertEqual(crumbs, ["a debug line", "an info line", "a warning line", "an error line"])

        let logs = items(server, type: "log").flatMap { $0["items"]?.arrayValue ?? [] }
        XCTAssertEqual(logs.compactMap { $0["body"]?.stringValue }, ["a warning line", "an error line"], "only warning and above are sent")
        let warning = try XCTUnwrap(logs.first)
        XCTAssertEqual(warning["attributes"]?["retries"]?["value"]?.int64Value, 3)
        XCTAssertEqual(warning["attributes"]?["retries"]?["type"]?.stringValue, "integer")
        XCTAssertEqual(warning["attributes"]?["cold"]?["type"]?.stringValue, "boolean")
        XCTAssertNotNil(warning["attributes"]?["code.lineno"])

        let sessions = items(server, type: "session")
        XCTAssertEqual(sessions.compactMap { $0["status"]?.stringValue }, ["ok", "exited"])
        XCTAssertEqual(sessions.last?["errors"]?.int64Value, 1)
        XCTAssertEqual(Set(sessions.compactMap { $0["sid"]?.stringValue }).count, 1)

        let installID = try String(contentsOfFile: dataDir + "/install-id", encoding: .utf8)
        XCTAssertTrue(server.requests.allSatisfy { $0.headers["x-faultline-install-id"] == installID })
        XCTAssertTrue(server.requests.allSatisfy { $0.headers["x-faultline-app-id"] == "dev.faultline.crasher" })
    }

    func testCrashIsSentOnTheNextLaunchAndItsSessionMarkedCrashed() throws {
        let server = try ScriptedHTTPServer()
        let crash = try run("segv", dsn: server.dsn())
        XCTAssertEqual(crash.signal, SIGSEGV)
        let crashID = try XCTUnwrap(
            TestSupport.files(in: dataDir + "/crashes", suffix: ".crash.json").first
                .map { try CrashReport.parse(Data(contentsOf: URL(fileURLWithPath: $0))).eventID })
        let next = try run("none", dsn: server.dsn())
        XCTAssertEqual(next.exitCode, 0, next.description)
        let fatal = items(server, type: "event").filter { $0["level"]?.stringValue == "fatal" }
        XCTAssertEqual(fatal.compactMap { $0["event_id"]?.stringValue }, [crashID])
        let statuses = items(server, type: "session").compactMap { $0["status"]?.stringValue }
        XCTAssertTrue(statuses.contains("crashed"), "\(statuses)")
        let crashed = try XCTUnwrap(items(server, type: "session").first { $0["status"]?.stringValue == "crashed" })
        XCTAssertNotNil(crashed["started"]?.stringValue, "Sentry requires started on every update")
        if let ok = items(server, type: "session").first(where: { $0["status"]?.stringValue == "ok" && $0["sid"] == crashed["sid"] }) {
            XCTAssertEqual(crashed["started"], ok["started"], "the crash update names when the crashed session began")
        }
        XCTAssertFalse(statuses.contains("abnormal"), "a crashed session is not also abnormal")
    }

    func testACrashedSessionIsCountedAsStartedExactlyOnceWhetherOrNotItsOpeningUpdateWasQueued() throws {
        // segv-before-preparation crashes before the SDK's worker has queued the opening update
        // (`init: true`); segv-after-preparation most likely after it.
        for mode in ["segv-before-preparation", "segv-after-preparation"] {
            try? FileManager.default.removeItem(atPath: dataDir)
            let server = try ScriptedHTTPServer()
            XCTAssertEqual(try run(mode, dsn: server.dsn()).signal, SIGSEGV, mode)
            XCTAssertEqual(try run("none", dsn: server.dsn()).exitCode, 0, mode)
            let sessions = items(server, type: "session")
            let crashed = try XCTUnwrap(sessions.first { $0["status"]?.stringValue == "crashed" }, mode)
            let starts = sessions.filter { $0["sid"] == crashed["sid"] && $0["init"]?.boolValue == true }
            XCTAssertEqual(starts.count, 1, "\(mode): the crashed session is counted as started once: \(sessions)")
        }
    }

    func testACrashInAForkedChildIsAnEventAndEndsNoSession() throws {
        let server = try ScriptedHTTPServer()
        let parent = try run("fork-child-segv", dsn: server.dsn())
        XCTAssertEqual(parent.exitCode, 0, parent.description)
        XCTAssertTrue(parent.stdout.contains("child ended by signal \(SIGSEGV)"), parent.description)
        XCTAssertEqual(try run("none", dsn: server.dsn()).exitCode, 0)

        let events = items(server, type: "event")
        XCTAssertEqual(events.filter { $0["level"]?.stringValue == "fatal" }.count, 1, "the child's crash is reported")
        XCTAssertEqual(events.filter { $0["level"]?.stringValue == "error" }.count, 1, "so is the error it captured")
        for event in events {
            XCTAssertNil(event["tags"]?["session_id"], "a forked child has no session: \(event["level"] ?? "")")
        }
        let sessions = items(server, type: "session")
        XCTAssertFalse(sessions.contains { $0["status"]?.stringValue == "crashed" }, "the parent's session ended cleanly: \(sessions)")
        XCTAssertFalse(sessions.contains { $0["status"]?.stringValue == "abnormal" }, "\(sessions)")
        XCTAssertEqual(sessions.filter { $0["status"]?.stringValue == "exited" }.count, 2, "the parent's and the next launch's")
    }

    func testExitWhileTheServerIsSlowEndsPromptlyAndCleanlyAndKeepsTheRest() throws {
        let server = try ScriptedHTTPServer { _ in .slow(seconds: 8, then: 200) }
        let o = try run("log-and-exit", dsn: server.dsn())
        XCTAssertEqual(o.exitCode, 0, "no crash in exit's clean-up while a request was in flight: \(o)")
        XCTAssertLessThan(o.duration, 6, "the exit flush is bounded")
        XCTAssertFalse(TestSupport.files(in: dataDir + "/outbox", suffix: ".envelope").isEmpty, "unsent envelopes stay for the next launch")
        XCTAssertTrue(TestSupport.files(in: dataDir + "/crashes", suffix: ".crash.json").isEmpty)
    }

    func testKilledRunIsReportedAsAnAbnormalSession() throws {
        let server = try ScriptedHTTPServer()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: crasher)
        p.arguments = ["capture-loop", "--count", "100000", "--data-dir", dataDir, "--dsn", server.dsn()]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        usleep(500_000)
        p.end(with: SIGKILL)
        XCTAssertEqual(try run("none", dsn: server.dsn()).exitCode, 0)
        XCTAssertTrue(items(server, type: "session").contains { $0["status"]?.stringValue == "abnormal" })
    }

    /// A session that ends in a crash or a kill -9 counts the errors the app captured in it (the
    /// crashed update said 1 after three captured errors and the crash, the abnormal one 0 after 5).
    func testCrashedAndAbnormalEndsCountTheSessionsErrors() throws {
        let server = try ScriptedHTTPServer()
        let crash = try run("capture-loop", dsn: server.dsn(), ["--count", "3", "--then-crash"])
        XCTAssertEqual(crash.signal, SIGSEGV, crash.description)
        XCTAssertEqual(try run("none", dsn: server.dsn()).exitCode, 0)
        let crashed = try XCTUnwrap(items(server, type: "session").first { $0["status"]?.stringValue == "crashed" })
        XCTAssertEqual(crashed["errors"]?.int64Value, 4, "three captured errors and the crash")

        let out = dataDir + "/hang-stdout"
        FileManager.default.createFile(atPath: out, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: crasher)
        p.arguments = ["capture-loop", "--count", "5", "--then-hang", "--data-dir", dataDir, "--dsn", server.dsn()]
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !((try? String(contentsOfFile: out, encoding: .utf8))?.contains("captured all") ?? false) { usleep(20_000) }
        XCTAssertEqual(p.end(with: SIGKILL).signal, SIGKILL)
        XCTAssertEqual(try run("none", dsn: server.dsn()).exitCode, 0)
        let abnormal = try XCTUnwrap(items(server, type: "session").first { $0["status"]?.stringValue == "abnormal" })
        XCTAssertEqual(abnormal["errors"]?.int64Value, 5, "the five errors captured before the kill")
    }

    func testASecondRunningInstanceIsNotMistakenForAnAbnormalEnd() throws {
        let server = try ScriptedHTTPServer()
        let a = try startWaitingInstance(server)
        XCTAssertEqual(try run("none", dsn: server.dsn()).exitCode, 0)  // B starts and ends while A runs
        a.end(with: SIGTERM)
        let statuses = items(server, type: "session").compactMap { $0["status"]?.stringValue }
        XCTAssertFalse(statuses.contains("abnormal"), "A was alive when B started: \(statuses)")
        XCTAssertEqual(statuses.filter { $0 == "exited" }.count, 2, "\(statuses)")
    }

    func testKill9WhileLoggingAndFlushingLosesNoQueuedEventAndDeliversEachOnce() throws {
        let server = try ScriptedHTTPServer { _ in .slow(seconds: 0.01, then: 200) }
        var printed: [String] = []
        for round in 0..<3 {
            let out = dataDir + "/stdout-\(round)"
            FileManager.default.createFile(atPath: out, contents: nil)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: crasher)
            // 3 rounds of at most 12 events of ~20 KB stay under the 1 MB queue cap: nothing is
            // dropped for space by design (drops are counted in memory, and a kill loses the count).
            p.arguments = ["capture-loop", "--count", "12", "--data-dir", dataDir, "--dsn", server.dsn()]
            p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            try p.run()
            // Killed mid-loop, at a different point each round: once it has queued round + 2
            // events (read from its output, not timed, so a loaded machine kills at the same place).
            let deadline = Date().addingTimeInterval(60)
            while p.isRunning && Date() < deadline {
                let captured = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("captured ") }.count
                if captured >= round + 2 { break }
                usleep(2_000)
            }
            p.end(with: SIGKILL)
            // Only ids the process printed after capture returned count as queued.
            printed += try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
                .filter { $0.hasPrefix("captured ") && $0.count == 41 }.map { String($0.dropFirst(9)) }
        }
        XCTAssertGreaterThan(printed.count, 3)
        let restart = try run("flush", dsn: server.dsn())  // sends what earlier runs left queued
        XCTAssertEqual(restart.exitCode, 0, restart.description)
        let received = items(server, type: "event").compactMap { $0["event_id"]?.stringValue }
        let missing = Set(printed).subtracting(received)
        XCTAssertEqual(missing, [], "every queued event arrives")
        let overflow = items(server, type: "client_report").flatMap { $0["discarded_events"]?.arrayValue ?? [] }
            .filter { $0["reason"]?.stringValue == "queue_overflow" }
        XCTAssertEqual(overflow.count, 0, "nothing was dropped for space in this test")
        // At-least-once on the wire: a kill between the server's 200 and the file's removal sends
        // it again; the server deduplicates by event id. Such resends must be rare.
        XCTAssertLessThanOrEqual(received.count - Set(received).count, 3)
    }

    func testSIGTERMFlushesEndsTheSessionAndStillKillsBySIGTERM() throws {
        let server = try ScriptedHTTPServer()
        let p = try startWaitingInstance(server)
        XCTAssertEqual(p.end(with: SIGTERM), ProcessEnd(exitCode: nil, signal: SIGTERM))
        XCTAssertEqual(
            items(server, type: "log").flatMap { $0["items"]?.arrayValue ?? [] }.compactMap { $0["body"]?.stringValue },
            ["waiting for SIGTERM"])
        XCTAssertEqual(items(server, type: "session").last?["status"]?.stringValue, "exited")
    }

    func testChildProcessesOfAnSDKAppKeepTheDefaultSIGTERM() throws {
        // The SDK catches SIGTERM with a handler (reset to default across exec), never SIG_IGN
        // (inherited across exec): a program the app starts must still be killable by SIGTERM.
        let server = try ScriptedHTTPServer()
        let o = try run("child-sigign", dsn: server.dsn())
        XCTAssertEqual(o.exitCode, 0, o.description)
        let line = try XCTUnwrap(o.stdout.split(separator: "\n").first { $0.hasPrefix("SigIgn:") })
        let mask = try XCTUnwrap(UInt64(line.split(separator: "\t").last ?? "", radix: 16))
        XCTAssertEqual(mask & (1 << (UInt64(SIGTERM) - 1)), 0, "SIGTERM is not ignored in the child: \(line)")
    }

    /// Runs the crasher's `flush-report-memory` against `server`, its VmHWM read while it runs
    /// (killed past 1 GiB, so a regression fails here rather than exhausting the machine).
    func peakMemoryOfAFlush(against server: ScriptedHTTPServer) throws -> (PeakMemory.Measured, peak: Int) {
        let m = try PeakMemory.run(
            crasher, ["flush-report-memory", "--data-dir", dataDir, "--dsn", server.dsn()],
            environment: ["SWIFT_BACKTRACE": "enable=no"], limit: 1 << 30, timeout: 60)
        let reported =
            m.outcome.stdout.split(separator: "\n").first { $0.hasPrefix("peak_rss_kib ") }
            .flatMap { Int($0.split(separator: " ")[1]) }.map { $0 * 1024 } ?? 0
        return (m, max(m.observedPeak, reported))
    }

    func testAnEndlessAnswerCostsTheAppItsCapNotTheBodyAndStillCounts() throws {
        // Before: a 1 GiB body cost the app 5.3 GB, 8 GiB killed it. Now 64 KiB of each answer is
        // read and the connection closed; the 200 still means delivered.
        let mebibyte = Data(repeating: 0x78, count: 1 << 20)
        for declared in [nil, Int64(8) << 30] {
            try? FileManager.default.removeItem(atPath: dataDir)
            let server = try ScriptedHTTPServer { _ in .endless(200, chunk: mebibyte, declaredLength: declared) }
            let (m, peak) = try peakMemoryOfAFlush(against: server)
            let label = declared.map { "Content-Length \($0)" } ?? "chunked"
            XCTAssertEqual(m.outcome.exitCode, 0, "\(label): \(m)")
            XCTAssertTrue(m.outcome.stdout.contains("flushed"), "\(label): \(m)")
            XCTAssertLessThan(peak, 100 << 20, "\(label): peak RSS \(peak >> 10) KiB")
            XCTAssertGreaterThanOrEqual(items(server, type: "session").count, 2, "\(label): the session's start and end went out")
            XCTAssertEqual(TestSupport.files(in: dataDir + "/outbox", suffix: ".envelope"), [], "\(label): each 200 counted as delivered")
            // What the app read (64 KiB) plus the two sockets' buffers, per request: not the 8 GiB offered.
            XCTAssertLessThan(server.bodyBytesSent, (16 << 20) * server.requests.count, "\(label): the app hung up early")
        }
    }

    func testAGzipBombAnswerIsNeverInflatedInTheApp() throws {
        // Before: an 18.7 MB gzip bomb cost the app 8.5 GB. This one inflates to 16 GiB.
        let bomb = GzipBomb.make(inflatedMiB: 16 << 10)
        let server = try ScriptedHTTPServer { _ in .bytes(200, headers: ["Content-Encoding": "gzip", "Content-Type": "application/json"], body: bomb) }
        let (m, peak) = try peakMemoryOfAFlush(against: server)
        XCTAssertEqual(m.outcome.exitCode, 0, m.description)
        XCTAssertLessThan(peak, 100 << 20, "peak RSS \(peak >> 10) KiB")
        XCTAssertEqual(TestSupport.files(in: dataDir + "/outbox", suffix: ".envelope"), [], "each 200 counted as delivered")
        XCTAssertLessThan(server.bodyBytesSent, (16 << 20) * server.requests.count, "no answer was read whole (\(bomb.count) bytes each)")
    }

    func testMalformedDSNSendsNothingButKeepsCrashCaptureWithOneWarning() throws {
        let o = try run("none", dsn: "definitely not a dsn")
        XCTAssertEqual(o.exitCode, 0)
        XCTAssertEqual(o.stderr.components(separatedBy: "nothing is sent, crashes are captured to disk").count - 1, 1, o.stderr)
        XCTAssertEqual(try JSONValue.parse(Data(o.stdout.utf8))["crash_handler_installed"]?.boolValue, true, "like no DSN")
    }

    func testServerTokenInTheDSNIsRefused() throws {
        let o = try run("none", dsn: "http://flst_00112233445566778899aabbccddeeff@127.0.0.1:9/1")
        XCTAssertEqual(o.exitCode, 0)
        XCTAssertTrue(o.stderr.contains("server token"), o.stderr)
        XCTAssertTrue(o.stderr.contains("nothing is sent"), o.stderr)
        XCTAssertEqual(try JSONValue.parse(Data(o.stdout.utf8))["crash_handler_installed"]?.boolValue, true, "crashes still go to disk")
    }

    func testNoDSNStillCapturesCrashesToDisk() throws {
        let o = try run("none", dsn: nil)
        let summary = try JSONValue.parse(Data(o.stdout.utf8))
        XCTAssertEqual(summary["crash_handler_installed"]?.boolValue, true)
        XCTAssertTrue(summary["warnings"]?.arrayValue?.contains { $0.stringValue?.contains("no DSN") == true } ?? false)
    }
}
