// The official Python sentry-sdk sending to our server: a message and an exception arrive,
// are stored and grouped.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ThirdPartyClientTests: XCTestCase {
    func testPythonSentrySDKSendsEventAndException() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        let probe = try TestSupport.run(python, ["-c", "import sentry_sdk"])
        guard probe.exitCode == 0 else { return XCTFail("sentry-sdk is not installed (tools/setup runs pip install sentry-sdk)") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, sentry_sdk
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, release="py@1.0")
            print(sentry_sdk.capture_message("hello from python"))
            def divide(a, b):
                return a / b
            try:
                divide(1, 0)
            except ZeroDivisionError:
                print(sentry_sdk.capture_exception())
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let ids = r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.count == 32 }
        XCTAssertEqual(ids.count, 2, r.stdout)
        try server.waitUntilIdle()
        for id in ids {
            let e = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
            XCTAssertEqual(e["event"]?["platform"]?.stringValue, "python")
            XCTAssertEqual(e["release"]?.stringValue, "py@1.0")
        }
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/")
        XCTAssertEqual(issues.arrayValue?.count, 2)
        let titles = issues.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
        XCTAssertTrue(titles.contains { $0.contains("ZeroDivisionError") && $0.contains("divide") }, "\(titles)")

        // The page shows a Python frame as the SDK resolved it: file, line, the source around it;
        // no "not symbolicated" badge on an event that never needed symbolication.
        let id = try XCTUnwrap(issues.arrayValue?.first { $0["title"]?.stringValue?.contains("ZeroDivisionError") == true }?["id"]?.stringValue)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(page.contains("send.py:5"), page)
        XCTAssertTrue(page.contains("<span class=\"cur\">") && page.contains("return a / b"), page)
        XCTAssertFalse(page.contains("not symbolicated"), page)
        XCTAssertFalse(page.contains("(client symbol)"), page)
    }

    /// sentry-sdk picks brotli whenever the `brotli` module imports (a common transitive
    /// dependency) and drops the event on a 415 without retrying in gzip: every encoding it can
    /// choose must be stored.
    func testPythonSentrySDKEventsArriveInEveryCompressionItChooses() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        let probe = try TestSupport.run(python, ["-c", "import sentry_sdk, brotli"])
        guard probe.exitCode == 0 else { return XCTFail("sentry-sdk or brotli is not installed (tools/setup pip installs both)") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-br")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, sentry_sdk
            algo = sys.argv[2]
            options = {} if algo == "default" else {"transport_compression_algo": algo}
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, release="py@2.0", _experiments=options)
            def charge(order):
                raise ValueError("card declined for " + order)
            try:
                charge("A-" + algo)
            except ValueError:
                print(sentry_sdk.capture_exception())
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        var ids: [String] = []
        for algo in ["default", "br", "gzip"] {  // default: br, as brotli imports
            let r = try TestSupport.run(python, [dir + "/send.py", server.dsn, algo], timeout: 60)
            XCTAssertEqual(r.exitCode, 0, r.description)
            ids += r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.count == 32 }
        }
        XCTAssertEqual(ids.count, 3)
        try server.waitUntilIdle()
        for id in ids {
            let e = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")
            XCTAssertEqual(e["release"]?.stringValue, "py@2.0", "event \(id) stored")
        }
        XCTAssertEqual(try server.storedCount(), 3, "none dropped")
    }

    func testABrotliBombIsRefusedWhileDecodingAndAnUnknownEncodingNamesTheAcceptedOnes() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        // 1 GiB of zeros, brotli'd to a few hundred bytes, made at test time.
        let path = TestSupport.makeTemporaryDirectory("brotli-bomb") + "/bomb.br"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let made = try TestSupport.run(
            python, ["-c", "import brotli, sys; open(sys.argv[1], 'wb').write(brotli.compress(bytes(1 << 30), quality=1))", path],
            timeout: 120)
        XCTAssertEqual(made.exitCode, 0, made.description)
        let bomb = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertLessThan(bomb.count, 1 << 20)
        let before = PeakMemory.highWaterMark(of: getpid()) ?? 0
        let refused = server.sendEnvelope(bomb, gzip: false, extraHeaders: ["Content-Encoding": "br"])
        XCTAssertTrue([400, 413].contains(refused.status), refused.text)
        // Decoded a piece at a time into the framing reader, which refuses the first over-long
        // part: the gigabyte never exists in memory.
        let after = PeakMemory.highWaterMark(of: getpid()) ?? 0
        XCTAssertLessThan(after - before, 256 << 20, "peak RSS grew by \((after - before) >> 20) MiB")
        let zstd = server.sendEnvelope(Data("x".utf8), gzip: false, extraHeaders: ["Content-Encoding": "zstd"])
        XCTAssertEqual(zstd.status, 415)
        XCTAssertTrue(zstd.text.contains("gzip, deflate, br"), zstd.text)
        XCTAssertEqual(try server.storedCount(), 0)
    }

    /// Messages group like Sentry's: by the template the `logging` integration sends (before
    /// formatting), else by the text with its numbers and ids normalised; never all in one issue.
    func testPythonMessagesGroupByTemplateAndPattern() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else { return XCTFail("sentry-sdk is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-messages")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import logging, sys, sentry_sdk
            from sentry_sdk.integrations.logging import LoggingIntegration
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False,
                            integrations=[LoggingIntegration(level=None, event_level=logging.ERROR)])
            log = logging.getLogger("payments")
            log.error("payment failed for order %s", "A-1")
            log.error("payment failed for order %s", "B-22")
            log.error("refund refused for order %s", "A-1")
            sentry_sdk.capture_message("disk 91% full on /var")
            sentry_sdk.capture_message("disk 97% full on /var")
            sentry_sdk.capture_message("cache warmed")
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        try server.waitUntilIdle()
        XCTAssertEqual(try server.storedCount(), 6)
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        let counts = Dictionary(issues.compactMap { i in i["title"]?.stringValue.map { ($0, i["count"]?.int64Value ?? 0) } }) { a, _ in a }
        XCTAssertEqual(issues.count, 4, "\(counts)")
        XCTAssertEqual(counts.first { $0.key.hasPrefix("payment failed for order") }?.value, 2, "\(counts)")
        XCTAssertEqual(counts.first { $0.key.hasPrefix("refund refused for order") }?.value, 1, "\(counts)")
        XCTAssertEqual(counts.first { $0.key.hasPrefix("disk ") }?.value, 2, "\(counts)")
        XCTAssertEqual(counts["cache warmed"], 1, "\(counts)")
    }

    /// sentry-sdk's `before_send` setting `fingerprint` groups as the SDK says; `{{ default }}`
    /// keeps the server's grouping and splits it further.
    func testTheSDKsFingerprintWins() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else { return XCTFail("sentry-sdk is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-fingerprint")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, sentry_sdk
            def before_send(event, hint):
                tenant = event.get("tags", {}).get("tenant")
                if tenant == "grouped":
                    event["fingerprint"] = ["database-unavailable"]
                elif tenant:
                    event["fingerprint"] = ["{{ default }}", tenant]
                return event
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, before_send=before_send)
            def connect():
                raise ConnectionError("db down")
            def query():
                raise TimeoutError("db slow")
            for fn, tenant in [(connect, "grouped"), (query, "grouped"), (connect, "eu"), (connect, "us"), (connect, "eu")]:
                with sentry_sdk.new_scope() as scope:
                    scope.set_tag("tenant", tenant)
                    try:
                        fn()
                    except Exception as e:
                        sentry_sdk.capture_exception(e)
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        try server.waitUntilIdle()
        XCTAssertEqual(try server.storedCount(), 5)
        let counts = (try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []).compactMap { $0["count"]?.int64Value }
        // database-unavailable: 2 (two different errors, one issue); connect + eu: 2; connect + us: 1.
        XCTAssertEqual(counts.sorted(), [1, 2, 2])
    }

    /// Issue 31 item 2: under grouping rules 2 (new projects) a Python frame groups by module and
    /// function, as Sentry's does: `handle` raising the same error in two modules is two issues.
    /// A project on rules 1 (every project from before them) keeps grouping by function alone.
    func testPythonFramesGroupByModuleAndFunctionUnderRulesTwoOnly() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else { return XCTFail("sentry-sdk is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        let store = server.server.store
        XCTAssertEqual(try store.project(idOrSlug: String(server.projectID))?.groupingConfig, .newProjects, "a new project gets the newest rules")
        let legacy = try server.server.stores.projects.createProject(slug: "legacy", name: "Legacy")
        try server.server.stores.projects.setGroupingConfig(projectID: legacy.id, .v1)
        let legacyKey = try server.server.stores.projects.createPublicKey(projectID: legacy.id, allowedAppIDs: [])
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-modules")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (module, message) in [("billing", "bad amount"), ("shipping", "bad address")] {
            try "def handle():\n    raise ValueError(\"\(message)\")\n".write(toFile: dir + "/\(module).py", atomically: false, encoding: .utf8)
        }
        let script = """
            import sys, sentry_sdk
            sys.path.insert(0, sys.argv[2])
            import billing, shipping
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False)
            for m in [billing, shipping, billing]:
                try:
                    m.handle()
                except Exception as e:
                    sentry_sdk.capture_exception(e)
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        for dsn in [server.dsn, server.server.dsn(key: legacyKey.key, project: legacy)] {
            let r = try TestSupport.run(python, [dir + "/send.py", dsn, dir], timeout: 60)
            XCTAssertEqual(r.exitCode, 0, r.description)
        }
        try server.waitUntilIdle()
        func counts(_ project: Int64) throws -> [Int64] {
            (try server.getJSON("/api/0/projects/faultline/\(project)/issues/").arrayValue ?? []).compactMap { $0["count"]?.int64Value }.sorted()
        }
        XCTAssertEqual(try counts(server.projectID), [1, 2], "rules 2: billing.handle and shipping.handle are two issues")
        XCTAssertEqual(try counts(legacy.id), [3], "rules 1: handle is handle")
        let titles = (try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []).compactMap { $0["title"]?.stringValue }
        XCTAssertTrue(titles.contains { $0.contains("handle (billing)") }, "\(titles)")
    }

    /// Issue 31 item 3: sentry-python sends every frame's local variables by default, and they
    /// can hold secrets. A project keeps them only when it opted in: otherwise ingest drops them
    /// before anything is stored; an opted-in project shows them on the issue page.
    func testFrameVariablesAreStoredOnlyForAProjectThatOptedIn() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else { return XCTFail("sentry-sdk is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        let store = server.server.store
        let debugging = try server.server.stores.projects.createProject(slug: "debugging", name: "Debugging")
        try server.server.stores.projects.setKeepsFrameVariables(projectID: debugging.id, true)
        let key = try server.server.stores.projects.createPublicKey(projectID: debugging.id, allowedAppIDs: [])
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-vars")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, sentry_sdk
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False)
            def login(user):
                # The value exists only at run time (a source line is no variable), under a name
                # sentry-python's own scrubber does not blank.
                order_note = "hunter" + str(2) + "-secret"
                raise PermissionError("denied for " + user)
            try:
                login("alice")
            except Exception as e:
                print(sentry_sdk.capture_exception(e))
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        var ids: [Int64: String] = [:]
        for (project, dsn) in [(server.projectID, server.dsn), (debugging.id, server.server.dsn(key: key.key, project: debugging))] {
            let r = try TestSupport.run(python, [dir + "/send.py", dsn], timeout: 60)
            XCTAssertEqual(r.exitCode, 0, r.description)
            ids[project] = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "-", with: "")
        }
        try server.waitUntilIdle()
        let dropped = try server.get("/api/0/projects/faultline/\(server.projectID)/events/\(XCTUnwrap(ids[server.projectID]))/")
        XCTAssertEqual(dropped.status, 200, dropped.text)
        XCTAssertFalse(dropped.text.contains("hunter2"), "not stored without the opt-in")
        XCTAssertFalse(dropped.text.contains("\"vars\""))
        let kept = try server.get("/api/0/projects/faultline/\(debugging.id)/events/\(XCTUnwrap(ids[debugging.id]))/")
        XCTAssertTrue(kept.text.contains("hunter2-secret"), "kept for the project that asked: \(kept.text.prefix(300))")
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: debugging.id, limit: 1, offset: 0).first)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue.id)", login).text
        XCTAssertTrue(page.contains("local variable"), "the page shows the frame's variables")
        XCTAssertTrue(page.contains("<th>order_note</th>"), page)
        // A Python issue arrives with its names: no "(not) symbolicated" badge, on the list either.
        XCTAssertFalse(page.contains("symbolicated</span>"), "no badge on the issue page")
        XCTAssertFalse(server.page("/ui/projects/debugging/issues", login).text.contains("symbolicated</span>"), "no badge in the list")
    }
}
