// What SDKs send beside the exception raised last must reach the reader: the exceptions chained
// before it (a Python `KeyError` during whose handling a `ValueError` was raised, .NET's inner
// exceptions), each with its stack, and the log line an exception or a stack was reported with.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class MessageAndChainPageTests: XCTestCase {
    private func pythonFrame(_ function: String, _ file: String, _ line: Int) -> JSONValue {
        ["function": .string(function), "module": "shop.billing", "filename": .string(file), "lineno": .int(Int64(line)), "in_app": true]
    }

    /// A `logentry` with `params` and no `formatted` text is titled and shown formatted (it read
    /// `Hello %s and %s`); it still groups by its template.
    func testALogEntryWithParamsIsFormattedAndGroupsByItsTemplate() throws {
        XCTAssertEqual(LogEntryText.formatted("Hello %s and %d%%", params: ["Ada", 7]), "Hello Ada and 7%")
        XCTAssertEqual(LogEntryText.formatted("{} paid {1}, {0}", params: ["Ada", 9.5]), "Ada paid 9.5, Ada")
        XCTAssertEqual(LogEntryText.formatted("only %s and %s", params: ["one"]), "only one and %s", "a placeholder without a param stays")
        let server = try TestServer()
        defer { server.stop() }
        for who in ["Ada", "Grace"] {
            let e: JSONValue = [
                "event_id": .string(TestEvents.eventID()), "platform": "java", "level": "error",
                "logentry": ["message": "payment of %s failed", "params": [.string(who)]]
            ]
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
        }
        try server.waitUntilIdle()
        let issues = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue)
        XCTAssertEqual(issues.count, 1, "one template, one issue")
        XCTAssertTrue(issues.first?["title"]?.stringValue?.hasPrefix("payment of ") == true, "\(issues)")
        XCTAssertFalse(issues.first?["title"]?.stringValue?.contains("%s") ?? true, "\(issues)")
    }

    /// Breadcrumb times are UTC like every other time on the page, whatever form they came in,
    /// and breadcrumbs past the newest 200 are counted, not dropped silently.
    func testBreadcrumbTimesAreUTCAndTheOnesNotShownAreCounted() throws {
        let server = try TestServer()
        defer { server.stop() }
        var e = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
        var crumbs: [JSONValue] = (0..<250).map { ["message": .string("crumb \($0)"), "timestamp": .double(1_796_400_000 + Double($0))] }
        crumbs.append(["message": "offset time", "timestamp": "2026-12-05T04:29:00+02:00"])
        crumbs.append(["message": "seconds as text", "timestamp": "1796437800"])
        e["breadcrumbs"] = ["values": .array(crumbs)]
        server.ingest(e)
        try server.waitUntilIdle()
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        let html = server.page("/ui/issues/\(id)", try XCTUnwrap(server.webLogin())).text
        XCTAssertTrue(html.contains("52 earlier breadcrumbs not shown"), "252 sent, 200 shown")
        XCTAssertTrue(html.contains(HTML.time(1_796_437_740)), "an offset time in UTC")
        XCTAssertTrue(html.contains(HTML.time(1_796_437_800)), "seconds as text in UTC")
        XCTAssertFalse(html.contains("+02:00"))
    }

    func testTheIssuePageShowsChainedExceptionsAndTheMessage() throws {
        let server = try TestServer()
        defer { server.stop() }
        // sentry-python's `logger.exception("Failed to charge order %s", "A-77")` while a KeyError
        // was being handled: the cause first, the exception raised last at the end.
        let chained: JSONValue = [
            "event_id": .string(TestEvents.eventID()), "platform": "python", "level": "error",
            "logentry": ["message": "Failed to charge order %s", "params": ["A-77"], "formatted": "Failed to charge order A-77"],
            "exception": [
                "values": [
                    [
                        "type": "KeyError", "value": "'sku-991'", "mechanism": ["type": "chained", "exception_id": 1, "parent_id": 0],
                        "stacktrace": ["frames": [pythonFrame("charge", "shop/billing.py", 40), pythonFrame("line_total", "shop/prices.py", 12)]]
                    ],
                    [
                        "type": "ValueError", "value": "price missing", "mechanism": ["type": "logging", "exception_id": 0],
                        "stacktrace": ["frames": [pythonFrame("charge", "shop/billing.py", 44)]]
                    ]
                ]
            ]
        ]
        // sentry-php's captureMessage with attach_stacktrace: a message and a top-level stack.
        let message: JSONValue = [
            "event_id": .string(TestEvents.eventID()), "platform": "php", "level": "warning",
            "message": ["message": "User %s failed login", "params": ["bob"], "formatted": "User bob failed login"],
            "stacktrace": [
                "frames": [
                    ["filename": "/var/www/index.php", "lineno": 12, "in_app": true],  // the script's top level: no function
                    ["function": "App\\Auth\\Login::attempt", "filename": "/src/Auth/Login.php", "lineno": 31, "in_app": true]
                ]
            ]
        ]
        for e in [chained, message] { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200) }
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        let titles = issues.compactMap { $0["title"]?.stringValue }
        XCTAssertTrue(titles.contains { $0.hasPrefix("ValueError: price missing") }, "titled by the exception raised last: \(titles)")
        XCTAssertTrue(titles.contains { $0.hasPrefix("User bob failed login") }, "a message with a stack is titled by the message: \(titles)")

        let login = try XCTUnwrap(server.webLogin())
        let chainedIssue = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.hasPrefix("ValueError") == true }?["id"]?.stringValue)
        let page = server.page("/ui/issues/\(chainedIssue)", login).text
        XCTAssertTrue(page.contains("<h2>Message</h2>") && page.contains("Failed to charge order A-77"), "the log line: \(page.prefix(4000))")
        let chain = try XCTUnwrap(page.range(of: "<h2>Chained exceptions (1 more)</h2>"), "a section for the cause")
        let section = page[chain.lowerBound...]
        XCTAssertTrue(section.contains("KeyError: &#39;sku-991&#39;") || section.contains("KeyError: 'sku-991'"), section.prefix(2000).description)
        XCTAssertTrue(section.contains("line_total"), "the cause's own frame: \(section.prefix(3000))")

        let messageIssue = try XCTUnwrap(issues.first { $0["title"]?.stringValue?.hasPrefix("User bob") == true }?["id"]?.stringValue)
        let messagePage = server.page("/ui/issues/\(messageIssue)", login).text
        XCTAssertTrue(messagePage.contains("User bob failed login"), messagePage.prefix(3000).description)
        XCTAssertTrue(messagePage.contains("Login::attempt"), "and its stack")
        XCTAssertTrue(messagePage.contains("/var/www/index.php:12"), "a frame without a function is its file and line")
        for page in [page, messagePage] {
            XCTAssertFalse(page.contains("+0x0"), "frames without an address show none: \(page.prefix(3000))")
            XCTAssertFalse(page.contains("faulting address"))
        }
    }

    /// sentry-rust (and other SDKs that resolve their frames in the process) send native frames
    /// with an address and a build-id *and* the function, file, line and lines around it. Until
    /// the debug file is uploaded the client's file, line and source are what there is: shown,
    /// not only the function name.
    func testANativeFrameWithoutItsDebugFileShowsTheClientsFileLineAndSource() throws {
        let server = try TestServer()
        defer { server.stop() }
        let image = "3f5c0a1e2b4d6f8091a2b3c4d5e6f7081a2b3c4d"
        let event: JSONValue = [
            "event_id": .string(TestEvents.eventID()), "platform": "native", "level": "fatal",
            "exception": [
                "values": [
                    [
                        "type": "panic", "value": "index out of bounds",
                        "stacktrace": [
                            "frames": [
                                [
                                    "instruction_addr": "0x55d0c0001200", "function": "main", "filename": "src/main.rs", "lineno": 3,
                                    "in_app": true
                                ],
                                [
                                    "instruction_addr": "0x55d0c0001340", "function": "shop::charge", "filename": "src/shop.rs", "lineno": 42,
                                    "pre_context": ["fn charge(items: &[u32]) -> u32 {"], "context_line": "    items[7] * 2",
                                    "post_context": ["}"], "in_app": true
                                ]
                            ]
                        ]
                    ]
                ]
            ],
            "debug_meta": [
                "images": [["type": "elf", "code_id": .string(image), "image_addr": "0x55d0c0000000", "image_size": 65536, "code_file": "/srv/shop"]]
            ]
        ]
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        try server.waitUntilIdle()
        let issue = try XCTUnwrap((try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []).first)
        let id = try XCTUnwrap(issue["id"]?.stringValue)
        let stack = try server.getJSON("/api/0/issues/\(id)/")["stack"]?.arrayValue ?? []
        let charge = try XCTUnwrap(stack.first { $0["function"]?.stringValue == "shop::charge" }, "\(stack)")
        XCTAssertEqual(charge["filename"]?.stringValue, "src/shop.rs")
        XCTAssertEqual(charge["lineno"]?.int64Value, 42)
        XCTAssertEqual(charge["symbolicated"]?.boolValue, false, "the server's own symbols are still missing")

        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(page.contains("src/shop.rs:42"), "the client's file and line: \(page.prefix(6000))")
        XCTAssertTrue(page.contains("items[7] * 2"), "the client's source line")
        XCTAssertTrue(page.contains("client symbol"), "and that the server has no debug file for it")
    }
}
