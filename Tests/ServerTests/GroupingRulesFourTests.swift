// Grouping rules 4 (new projects), as Sentry groups what SDKs send: a message sent with a stack
// by the real Python sentry-sdk (`attach_stacktrace`: the stack is on the current thread) groups by
// that stack; a chained exception by its causes too; an exception without a stack by its type and its value's pattern, a typeless one by
// its value; an anonymous JavaScript frame by its file and line of code. A project on rules 3 keeps
// its grouping.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class GroupingRulesFourTests: XCTestCase {
    func issues(_ server: TestServer, project: String = "default") throws -> [JSONValue] {
        try server.waitUntilIdle()
        return try server.getJSON("/api/0/projects/faultline/\(project)/issues/?limit=100").arrayValue ?? []
    }

    /// Runs `script` with the real Python sentry-sdk against `server` (its DSN is `sys.argv[1]`).
    func runPython(_ script: String, against server: TestServer) throws {
        try ThirdParty.runPython(script, dsn: server.dsn)
    }

    func testAMessageWithAStackFromThePythonSDKGroupsByItsStack() throws {
        let server = try TestServer()
        defer { server.stop() }
        XCTAssertEqual(try server.server.store.project(idOrSlug: String(server.projectID))?.groupingConfig, .v4)
        // The same call site with two different texts, and another call site: two issues, not three.
        let script = """
            import sys, sentry_sdk
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, attach_stacktrace=True)
            def checkout(reason):
                sentry_sdk.capture_message("checkout failed: " + reason)
            def refund():
                sentry_sdk.capture_message("refund window closed")
            checkout("the bank declined the card")
            checkout("the address could not be verified")
            refund()
            sentry_sdk.flush(10)
            """
        try runPython(script, against: server)
        let found = try issues(server)
        XCTAssertEqual(found.count, 2, "\(found.map { $0["title"] })")
        XCTAssertEqual(Set(found.compactMap { $0["count"]?.int64Value }), [2, 1])
        XCTAssertTrue(found.contains { $0["culprit"]?.stringValue?.contains("checkout") == true }, "\(found.map { $0["culprit"] })")
    }

    /// One wrapper raised from two different causes (`raise … from`) is two problems.
    func testAChainedExceptionGroupsByItsCausesToo() throws {
        let server = try TestServer()
        defer { server.stop() }
        let script = """
            import sys, sentry_sdk
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False)
            class ServiceError(Exception): pass
            def db(): raise ConnectionError("db down")
            def cache(): raise KeyError("user:17")
            def service(step):
                try:
                    step()
                except Exception as e:
                    raise ServiceError("request failed") from e
            for step in (db, db, cache):
                try:
                    service(step)
                except ServiceError:
                    sentry_sdk.capture_exception()
            sentry_sdk.flush(10)
            """
        try runPython(script, against: server)
        let found = try issues(server)
        XCTAssertEqual(found.count, 2, "\(found.map { $0["title"] })")
        XCTAssertEqual(Set(found.compactMap { $0["count"]?.int64Value }), [2, 1])
    }

    func testStacklessAndTypelessExceptionsAndAnonymousFrames() throws {
        let server = try TestServer()
        defer { server.stop() }
        func send(_ event: JSONValue) {
            var e = event
            e["event_id"] = .string(TestEvents.eventID())
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
        }
        func exception(_ type: String?, _ value: String, frames: [JSONValue]? = nil) -> JSONValue {
            var v: JSONValue = ["value": .string(value)]
            if let type { v["type"] = .string(type) }
            if let frames { v["stacktrace"] = ["frames": .array(frames)] }
            return ["platform": "javascript", "exception": ["values": [v]]]
        }
        // Stackless: the type and the value's pattern (numbers normalised) group.
        send(exception("RuntimeError", "no stack here for user 17"))
        send(exception("RuntimeError", "no stack here for user 99"))
        send(exception("RuntimeError", "a different failure entirely"))
        // Typeless (older browser SDKs): by the value, titled by it.
        send(exception(nil, "Non-Error promise rejection captured with value: undefined"))
        // Anonymous frames: by file and line of code; two files are two issues, and a deploy that
        // moves the line (another lineno) keeps one.
        func anonymous(_ file: String, _ line: Int, _ code: String) -> JSONValue {
            [
                "filename": .string(file), "abs_path": .string("https://shop.example/" + file), "lineno": .int(Int64(line)), "context_line": .string(code),
                "in_app": true
            ]
        }
        send(exception("TypeError", "x is undefined", frames: [anonymous("checkout.js", 400, "total += x.price;")]))
        send(exception("TypeError", "x is undefined", frames: [anonymous("checkout.js", 412, "total += x.price;")]))
        send(exception("TypeError", "x is undefined", frames: [anonymous("vendor.js", 40, "return x.length;")]))
        let found = try issues(server)
        let titles = found.compactMap { $0["title"]?.stringValue }.sorted()
        XCTAssertEqual(found.count, 5, "\(titles)")
        XCTAssertTrue(titles.contains("RuntimeError: no stack here for user 17") || titles.contains("RuntimeError: no stack here for user 99"), "\(titles)")
        XCTAssertTrue(titles.contains("Non-Error promise rejection captured with value: undefined"), "\(titles)")
        XCTAssertTrue(titles.contains("TypeError: x is undefined in checkout.js"), "\(titles)")
        XCTAssertTrue(titles.contains("TypeError: x is undefined in vendor.js"), "\(titles)")
        XCTAssertEqual(found.first { $0["title"]?.stringValue?.contains("checkout.js") == true }?["count"]?.int64Value, 2)

        // A project on rules 3 keeps grouping as it did: the anonymous frames are no frames there.
        let projects = server.server.stores.projects
        let older = try projects.createProject(slug: "older", name: "Older")
        try projects.setGroupingConfig(projectID: older.id, .v3)
        let key = try projects.createPublicKey(projectID: older.id, allowedAppIDs: [])
        for file in ["checkout.js", "vendor.js"] {
            var e = exception("TypeError", "x is undefined", frames: [anonymous(file, 1, "code")])
            e["event_id"] = .string(TestEvents.eventID())
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e), key: key.key.value, project: String(older.id)).status, 200)
        }
        XCTAssertEqual(try issues(server, project: "older").count, 1, "rules 3: one issue in unknown location")
    }
}
