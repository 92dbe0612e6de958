// Alerts end to end against real receivers: a real SMTP server (aiosmtpd) and an HTTP webhook
// receiver. Evaluation and sending are driven round by round here (poll interval of an hour), so
// what each round must have sent is exact, whatever the machine's load.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Synchronization

final class AlertTests: XCTestCase {
    var smtp: SMTPSink!
    var hook: ScriptedHTTPServer!

    override func setUpWithError() throws {
        smtp = try SMTPSink()
        hook = try ScriptedHTTPServer()
    }

    override func tearDown() {
        smtp?.stop()
        hook?.stop()
    }

    func makeServer(digestSeconds: Double = 1, sendTimeout: Int = 10) throws -> TestServer {
        let port = smtp.port
        let server = try TestServer { config in
            config.alerts.smtp = SMTPSettings(url: "smtp://127.0.0.1:\(port)", from: "faultline@test.example")
            config.alerts.pollInterval = 3600
            config.alerts.sendTimeout = sendTimeout
            config.alerts.digestInterval = digestSeconds
            config.publicURL = "https://errors.example.com"
        }
        // Only `round` sends: the sender's own thread, woken by the evaluator, would race it.
        server.server.alerts?.evaluator.onEnqueued = {}
        return server
    }

    /// One evaluation round and one sending round, as the workers would run them (`periodic`:
    /// with the digests, "now symbolicated" alerts and ignores whose time ran out).
    func round(_ server: TestServer, periodic: Bool = true) throws {
        try server.waitUntilIdle()
        let alerts = try XCTUnwrap(server.server.alerts)
        alerts.evaluator.tick(periodic: periodic)
        alerts.dispatcher.sendDue()
    }

    func addRule(_ server: TestServer, _ body: JSONValue) throws -> Int64 {
        let r = RawHTTP.send(
            port: server.port, method: "POST", path: "/api/0/projects/faultline/default/alerts/",
            headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"], body: Data(body.jsonString.utf8))
        XCTAssertEqual(r.status, 201, r.text)
        return try JSONValue.parse(r.body)["id"]?.int64Value ?? 0
    }

    func send(_ server: TestServer, count: Int, release: String = "app@1.0", function: String = "checkout") {
        let bodies = (0..<count).map { _ in TestEvents.envelope(TestEvents.native(offsets: [0x10, 0x20], release: release, functions: ["main", function])) }
        let failures = Mutex<[String]>([])
        let (port, key, project) = (server.port, server.publicKey, server.projectID)
        DispatchQueue.concurrentPerform(iterations: min(8, count)) { worker in
            for i in stride(from: worker, to: count, by: 8) {
                let r = RawHTTP.send(
                    port: port, method: "POST", path: "/api/\(project)/envelope/",
                    headers: [
                        "Content-Type": "application/x-sentry-envelope",
                        "X-Sentry-Auth": "Sentry sentry_version=7, sentry_client=tests/1.0, sentry_key=\(key)"
                    ], body: bodies[i])
                if r.status != 200 { failures.withLock { $0.append("\(r.status) \(r.text)") } }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [], "ingest")
    }

    func webhookKinds() -> [String] {
        hook.requests.compactMap { try? JSONValue.parse($0.body)["kind"]?.stringValue }
    }

    func testANewIssueIsOneMailAndOneWebhookAndAStormOfItIsOneDigest() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/hooks/faultline"), "on": "new-issue,regression"])
        _ = try addRule(server, ["channel": "email", "target": "oncall@example.com", "on": "new-issue"])

        send(server, count: 1)
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue"])
        let payload = try JSONValue.parse(try XCTUnwrap(hook.requests.first).body)
        XCTAssertEqual(payload["issue"]?["title"]?.stringValue, "SIGSEGV in checkout")
        XCTAssertEqual(payload["issue"]?["short_id"]?.stringValue, "DEFAULT-\(payload["issue"]?["id"]?.stringValue ?? "")")
        XCTAssertEqual(payload["issue"]?["release"]?.stringValue, "app@1.0")
        XCTAssertEqual(payload["issue"]?["top_frames"], ["checkout", "main"])
        XCTAssertTrue(payload["issue"]?["url"]?.stringValue?.hasPrefix("https://errors.example.com/ui/issues/") == true)
        XCTAssertEqual(hook.requests.first?.headers["content-type"], "application/json")
        XCTAssertEqual(smtp.messages.count, 1)
        let mail = try XCTUnwrap(smtp.messages.first)
        XCTAssertTrue(mail.contains("X-Envelope-To: oncall@example.com"), mail)
        XCTAssertTrue(mail.contains("Subject: [Faultline] New issue DEFAULT-"), mail)
        XCTAssertTrue(mail.contains("Title:    SIGSEGV in checkout"), mail)

        // A storm of the same issue: counted, not sent.
        let alertedAt = Date()
        send(server, count: 999)
        try round(server, periodic: false)
        XCTAssertEqual(webhookKinds(), ["new_issue"], "no alert per crash")
        XCTAssertEqual(smtp.messages.count, 1)
        // Once the digest interval has passed: one digest per rule, with every suppressed event.
        while Date() < alertedAt.addingTimeInterval(1.05) { usleep(50_000) }
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue", "digest"])
        XCTAssertEqual(try JSONValue.parse(hook.requests[1].body)["digest"]?["events"]?.int64Value, 999)
        XCTAssertEqual(smtp.messages.count, 2)
        XCTAssertTrue(smtp.messages[1].contains("999 more events since the last alert"), smtp.messages[1])
        try round(server)
        XCTAssertEqual(hook.requests.count, 2, "nothing more without new events")

        // Every delivery is visible with its state.
        let listed = try server.getJSON("/api/0/projects/faultline/default/alerts/deliveries/").arrayValue ?? []
        XCTAssertEqual(listed.count, 4)
        XCTAssertTrue(listed.allSatisfy { $0["state"]?.stringValue == "sent" }, "\(listed)")
    }

    func testResolvedInAReleaseReopensOnlyForThatReleaseOrANewerOne() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "regression"])
        func put(_ path: String, _ body: JSONValue) -> RawHTTP.Response {
            RawHTTP.send(port: server.port, method: "PUT", path: path, headers: ["Authorization": "Bearer \(server.token)"], body: Data(body.jsonString.utf8))
        }
        func post(_ path: String, _ body: JSONValue) -> RawHTTP.Response {
            RawHTTP.send(port: server.port, method: "POST", path: path, headers: ["Authorization": "Bearer \(server.token)"], body: Data(body.jsonString.utf8))
        }
        // Release order as CI creates them.
        for v in ["app@0.9", "app@1.0", "app@1.1"] {
            XCTAssertEqual(post("/api/0/organizations/faultline/releases/", ["version": .string(v), "projects": ["default"]]).status, 201)
        }
        send(server, count: 1, release: "app@1.0")
        try round(server)
        let issue = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue?.first)
        let id = try XCTUnwrap(issue["id"]?.stringValue)
        XCTAssertEqual(issue["status"]?.stringValue, "unresolved")
        let resolved = put("/api/0/issues/\(id)/", ["status": "resolved", "statusDetails": ["inRelease": "app@1.1"]])
        XCTAssertEqual(resolved.status, 200, resolved.text)

        send(server, count: 1, release: "app@1.0")  // an older release still crashing: expected
        try round(server)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["status"]?.stringValue, "resolved")
        XCTAssertEqual(hook.requests.count, 0)

        send(server, count: 1, release: "app@1.1")  // the fixed release: a regression
        try round(server)
        let after = try server.getJSON("/api/0/issues/\(id)/")
        XCTAssertEqual(after["status"]?.stringValue, "unresolved")
        XCTAssertEqual(after["regressions"]?.int64Value, 1)
        XCTAssertEqual(webhookKinds(), ["regression"])
        XCTAssertEqual(try JSONValue.parse(try XCTUnwrap(hook.requests.first).body)["issue"]?["release"]?.stringValue, "app@1.1")

        // Ignored until 2 more events: the second brings it back.
        XCTAssertEqual(put("/api/0/issues/\(id)/", ["status": "ignored", "statusDetails": ["ignoreCount": 2]]).status, 200)
        send(server, count: 1, release: "app@1.1")
        try round(server)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["status"]?.stringValue, "ignored")
        send(server, count: 1, release: "app@1.1")
        try round(server)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["status"]?.stringValue, "unresolved")
        XCTAssertEqual(webhookKinds(), ["regression", "unmuted"])
    }

    func testFailedDeliveriesAreRetriedWithTheirErrorAndNonHTTPWebhooksAreRefused() throws {
        let server = try makeServer()
        defer { server.stop() }
        for bad in ["file:///etc/passwd", "gopher://127.0.0.1/", "ftp://127.0.0.1/x", "http://", "javascript:alert(1)", "http://127.0.0.1:99999/hook"] {
            let r = RawHTTP.send(
                port: server.port, method: "POST", path: "/api/0/projects/faultline/default/alerts/",
                headers: ["Authorization": "Bearer \(server.token)"],
                body: Data(JSONValue.object(["channel": "webhook", "target": .string(bad)]).jsonString.utf8))
            XCTAssertEqual(r.status, 400, "\(bad): \(r.text)")
        }
        hook.setScript { _ in .status(503, body: String(repeating: "x", count: 1 << 20)) }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "new-issue"])
        send(server, count: 1)
        try round(server)
        var d = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/alerts/deliveries/").arrayValue?.first)
        XCTAssertEqual(d["state"]?.stringValue, "pending")
        XCTAssertEqual(d["attempts"]?.int64Value, 1)
        XCTAssertTrue(d["last_error"]?.stringValue?.contains("HTTP 503") == true, "\(d)")
        // The retry waits for its back-off; once the receiver answers, it goes, once.
        hook.setScript { _ in .status(200) }
        let database = try XCTUnwrap(server.server.alerts).database
        try database.writing { c in try c.execute("UPDATE alert_deliveries SET next_attempt = 0") }
        try round(server)
        d = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/alerts/deliveries/").arrayValue?.first)
        XCTAssertEqual(d["state"]?.stringValue, "sent")
        XCTAssertEqual(d["attempts"]?.int64Value, 2)
        XCTAssertEqual(hook.requests.count, 2)
    }

    func testAWebhookThatNeverAnswersHoldsUpNeitherIngestNorGrouping() throws {
        let server = try makeServer(sendTimeout: 120)
        defer { server.stop() }
        hook.setScript { _ in .slow(seconds: 120, then: 200) }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "new-issue"])
        send(server, count: 1, function: "first")
        try server.waitUntilIdle()
        let alerts = try XCTUnwrap(server.server.alerts)
        alerts.evaluator.onEnqueued = {}  // only the thread below sends
        alerts.evaluator.tick()
        let sender = Thread { alerts.dispatcher.sendDue() }  // held by the receiver for its whole timeout
        sender.start()
        let deadline = Date().addingTimeInterval(60)
        while hook.connectionCount == 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(hook.connectionCount, 1, "the send is under way")
        for n in 0..<20 { send(server, count: 1, function: "other\(n)") }
        try server.waitUntilIdle()
        alerts.evaluator.tick()
        XCTAssertEqual(try server.storedCount(), 21)
        XCTAssertFalse(sender.isFinished, "all of that happened while the send was still waiting for its answer")
        let pending = try server.getJSON("/api/0/projects/faultline/default/alerts/deliveries/").arrayValue ?? []
        XCTAssertEqual(pending.filter { $0["kind"]?.stringValue == "new_issue" }.count, 21, "the other issues' alerts are queued")
    }

    func testALateDebugFileSendsTheReadableAlertToWhoGotTheUnreadableOne() throws {
        let server = try makeServer()
        defer { server.stop() }
        let work = TestSupport.makeTemporaryDirectory("alert-symbolicated")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "new-issue,symbolicated"])
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue"])
        let first = try JSONValue.parse(hook.requests[0].body)["issue"]
        XCTAssertEqual(first?["symbolicated"], false)
        XCTAssertFalse(first?["title"]?.stringValue?.contains("faultline_fixture_leaf") ?? true, "\(first ?? .null)")

        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue", "symbolicated"])
        let named = try JSONValue.parse(hook.requests[1].body)
        XCTAssertTrue(named["issue"]?["title"]?.stringValue?.contains("faultline_fixture_leaf") == true, "\(named)")
        XCTAssertEqual(named["previous_title"], first?["title"])
        XCTAssertTrue(named["issue"]?["top_frames"]?.arrayValue?.first?.stringValue?.contains("faultline_fixture_leaf") == true, "\(named)")
        try round(server)
        XCTAssertEqual(hook.requests.count, 2, "told once")
    }

    func testAReleaseWhoseCrashFreeRateFallsBelowTheThresholdAlertsOnce() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "crash-free:95/60"])
        func session(_ release: String, crashed: Bool) -> Envelope.Item {
            let payload: JSONValue = [
                "sid": .string(UUID().uuidString.lowercased()), "init": true, "status": .string(crashed ? "crashed" : "exited"),
                "started": .string(SentryTimestamp.rfc3339(Date().timeIntervalSince1970)), "attrs": ["release": .string(release)]
            ]
            return Envelope.Item(type: "session", payload: payload.serialized())
        }
        for (release, crashed) in [("app@1.0", 2), ("app@2.0", 0)] {
            for n in 0..<20 {
                let body = Envelope(header: .object([:]), items: [session(release, crashed: n < crashed)]).serialized()
                XCTAssertEqual(server.sendEnvelope(body).status, 200)
            }
        }
        try XCTUnwrap(server.server.alerts).evaluator.crashFreeCheckInterval = 0  // every round looks (not every 30 s)
        try round(server)
        XCTAssertEqual(webhookKinds(), ["crash_free"])
        let p = try JSONValue.parse(try XCTUnwrap(hook.requests.first).body)
        XCTAssertEqual(p["release"]?.stringValue, "app@1.0")
        XCTAssertEqual(p["crash_free"]?["sessions"]?.int64Value, 20)
        XCTAssertEqual(p["crash_free"]?["crashed"]?.int64Value, 2)
        XCTAssertEqual(AlertMessage.headline(p), "Crash-free sessions of app@1.0: 90 % (below 95 %) over 60 min")
        try round(server)
        XCTAssertEqual(hook.requests.count, 1, "once per window")
    }

    /// Muting an issue is how people stop hearing of it: an ignored issue, and a resolved one
    /// whose new events (from an older release) do not reopen it, get neither frequency alerts
    /// nor digests. (They used to, both.)
    func testAMutedIssueIsNotAlertedAbout() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "new-issue,regression,frequency:3/5"])
        send(server, count: 1, release: "app@1.0", function: "ignoredOne")
        send(server, count: 1, release: "app@1.0", function: "resolvedOne")
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue", "new_issue"])
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        func id(_ function: String) throws -> String {
            try XCTUnwrap(issues.first { $0["title"]?.stringValue?.contains(function) == true }?["id"]?.stringValue)
        }
        for (issue, status) in [(try id("ignoredOne"), "ignored"), (try id("resolvedOne"), "resolvedInNextRelease")] {
            let r = RawHTTP.send(
                port: server.port, method: "PUT", path: "/api/0/issues/\(issue)/",
                headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"], body: Data(#"{"status":"\#(status)"}"#.utf8))
            XCTAssertEqual(r.status, 200, r.text)
        }
        let mutedAt = Date()
        send(server, count: 8, release: "app@1.0", function: "ignoredOne")
        send(server, count: 8, release: "app@1.0", function: "resolvedOne")  // the release it was resolved before
        try round(server)
        while Date() < mutedAt.addingTimeInterval(1.05) { usleep(50_000) }  // past the digest interval
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue", "new_issue"], "no frequency alert and no digest for muted issues")
    }

    /// Merging is how people say "these are one problem": the merged issue's crash coming back is
    /// that problem again (counted for its frequency), never a new issue.
    func testAMergedIssuesCrashComingBackIsNoNewIssue() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "new-issue,frequency:4/5"])
        send(server, count: 1, function: "keptOne")
        send(server, count: 1, function: "mergedOne")
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue", "new_issue"])
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        func id(_ function: String) throws -> Int64 {
            let text = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.contains(function) == true }?["id"]?.stringValue)
            return try XCTUnwrap(Int64(text))
        }
        let (kept, merged) = (try id("keptOne"), try id("mergedOne"))
        try IssueMerger.merge(merged, into: kept, in: server.server.store)

        send(server, count: 2, function: "mergedOne")
        try round(server)
        XCTAssertEqual(webhookKinds(), ["new_issue", "new_issue", "frequency"], "the merged crash again: the kept issue's 4th event in 5 minutes")
        let alert = try JSONValue.parse(try XCTUnwrap(hook.requests.last).body)
        XCTAssertEqual(alert["issue"]?["id"]?.stringValue, String(kept))
        XCTAssertEqual(alert["frequency"]?["seen"]?.int64Value, 4, "the merged issue's occurrences count for the issue it was merged into")
        let after = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        XCTAssertEqual(after.map { $0["id"]?.stringValue }, [String(kept)], "no issue opened for the merged fingerprint")
        XCTAssertEqual(after.first?["count"]?.int64Value, 4)
    }

    /// Each rule is a lane of its own: while one receiver holds its delivery (it answers only when
    /// the test lets it) with a backlog of 40 older deliveries behind it, another rule's alert
    /// still goes out.
    func testAReceiverThatHoldsItsAlertDelaysNoOtherRule() throws {
        let server = try makeServer(sendTimeout: 120)
        defer { server.stop() }
        let held = DispatchSemaphore(value: 0)
        hook.setScript { _ in
            held.wait()
            return .status(200)
        }
        let alerts = try XCTUnwrap(server.server.alerts)
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "new-issue"])
        for n in 0..<40 { send(server, count: 1, function: "backlog\(n)") }
        try server.waitUntilIdle()
        alerts.evaluator.tick()
        _ = try addRule(server, ["channel": "email", "target": "oncall@example.com", "on": "new-issue"])
        send(server, count: 1, function: "newest")
        try server.waitUntilIdle()
        alerts.evaluator.tick()
        let sender = Thread { alerts.dispatcher.sendDue() }
        sender.start()
        let deadline = Date().addingTimeInterval(60)
        while (hook.requests.isEmpty || smtp.messages.isEmpty) && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(hook.requests.count, 1, "the webhook has its first alert and holds it")
        XCTAssertEqual(smtp.messages.count, 1, "the email went out meanwhile, not behind the held webhook's backlog")
        XCTAssertFalse(sender.isFinished)
        XCTAssertNotNil(hook.requests.first?.headers[HeaderName.alertDelivery.lowercased()].flatMap { Int64($0) }, "a delivery id to recognise a repeat")
        for _ in 0..<41 { held.signal() }
        while !sender.isFinished && Date() < deadline.addingTimeInterval(120) { usleep(10_000) }
    }

    /// An ignore whose time runs out tells only the rules whose filters its events match.
    func testAnIgnoreThatRunsOutTellsOnlyMatchingRules() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/any"), "on": "regression"])
        _ = try addRule(
            server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/other-release"), "on": "regression", "release": "app@9.9"])
        send(server, count: 1, release: "app@1.0")
        try round(server)
        let issue = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue?.first?["id"]?.stringValue)
        let r = RawHTTP.send(
            port: server.port, method: "PUT", path: "/api/0/issues/\(issue)/",
            headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"],
            body: Data(#"{"status":"ignored","statusDetails":{"ignoreUntil":"2000-01-01T00:00:00Z"}}"#.utf8))
        XCTAssertEqual(r.status, 200, r.text)
        try round(server)
        XCTAssertEqual(hook.requests.map(\.path), ["/any"], "the rule filtered to another release is not told: \(hook.requests.map(\.path))")
        XCTAssertEqual(webhookKinds(), ["unmuted"])
    }

    /// A public URL typed with a trailing slash gives links without `//`, which the web session's
    /// cookie path would miss.
    func testAPublicURLWithATrailingSlashGivesCleanLinks() {
        var config = ServerConfiguration(dataDirectory: "/nonexistent")
        config.publicURL = "https://errors.example.com//"
        XCTAssertEqual(config.publicURL, "https://errors.example.com")
    }
}
