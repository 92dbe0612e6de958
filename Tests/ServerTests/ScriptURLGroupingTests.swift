// Grouping rules 3: a browser script's frame is grouped by the script's name, not by the URL it
// was loaded from, so a deploy (a new content hash, a cache-busting query, another CDN) does not
// split every issue of a web app. A project on rules 2 keeps grouping by the whole URL.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ScriptURLGroupingTests: XCTestCase {
    func testAScriptURLIsReadAsItsStableName() {
        let cases: [(String, String?)] = [
            ("https://cdn.example/assets/app.3f9a1c.js", "app.js"),
            ("https://cdn.example/assets/app.4b2e9d.js?v=12#x", "app.js"),
            ("https://other-cdn.example/static/js/main.4b2e9d11.chunk.js", "main.chunk.js"),
            ("https://cdn.example/js/chunk-vendors-5d7c20e1.min.js", "chunk-vendors.min.js"),
            ("https://cdn.example/js/Checkout.js", "checkout.js"),
            ("https://cdn.example/js/123.js", "123.js"),
            ("app:///main.jsbundle", "main.jsbundle"),
            ("webpack://shop/./src/cart.ts", "cart.ts"),
            ("/srv/app/billing.py", nil), ("billing", nil), ("https://cdn.example/", nil), ("://x.js", nil)
        ]
        for (url, name) in cases { XCTAssertEqual(ScriptURLName.of(url), name, url) }
        XCTAssertTrue(ScriptURLName.isHashLike("3f9a1c"))
        XCTAssertFalse(ScriptURLName.isHashLike("facade"), "a word of hex letters is not a hash")
        XCTAssertFalse(ScriptURLName.isHashLike("12345"), "too short")
    }

    private func browserError(_ url: String) -> JSONValue {
        [
            "event_id": .string(TestEvents.eventID()), "platform": "javascript", "level": "error",
            "exception": [
                "values": [
                    [
                        "type": "TypeError", "value": "Cannot read properties of undefined (reading 'price')",
                        "stacktrace": [
                            "frames": [
                                [
                                    "function": "HTMLButtonElement.onclick", "filename": .string(url), "abs_path": .string(url), "lineno": 1, "colno": 9012,
                                    "in_app": true
                                ],
                                ["function": "addToCart", "filename": .string(url), "abs_path": .string(url), "lineno": 1, "colno": 4410, "in_app": true]
                            ]
                        ]
                    ]
                ]
            ]
        ]
    }

    func testADeployKeepsABrowserIssueUnderRulesThree() throws {
        let server = try TestServer()
        defer { server.stop() }
        let projects = server.server.stores.projects
        XCTAssertGreaterThanOrEqual(
            try server.server.store.project(idOrSlug: String(server.projectID))?.groupingConfig.rawValue ?? 0, GroupingConfig.v3.rawValue)
        let older = try projects.createProject(slug: "older", name: "Older")
        try projects.setGroupingConfig(projectID: older.id, .v2)
        let olderKey = try projects.createPublicKey(projectID: older.id, allowedAppIDs: [])
        let urls = [
            "https://cdn.example/assets/app.3f9a1c.js", "https://cdn.example/assets/app.4b2e9d.js",
            "https://cdn2.example/assets/app.4b2e9d.js?v=2", "https://cdn.example/assets/admin.77aa01.js"
        ]
        for url in urls {
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(browserError(url))).status, 200)
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(browserError(url)), key: olderKey.key.value, project: String(older.id)).status, 200)
        }
        try server.waitUntilIdle()
        func counts(_ project: Int64) throws -> [Int64] {
            (try server.getJSON("/api/0/projects/faultline/\(project)/issues/").arrayValue ?? []).compactMap { $0["count"]?.int64Value }.sorted()
        }
        XCTAssertEqual(try counts(server.projectID), [1, 3], "rules 3: app.js across three deploys is one issue, admin.js another")
        XCTAssertEqual(try counts(older.id), [1, 1, 1, 1], "rules 2: every URL its own issue, as before")
        let titles = (try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []).compactMap { $0["title"]?.stringValue }
        XCTAssertTrue(titles.contains { $0.hasSuffix("in addToCart (app.js)") }, "\(titles)")
    }
}
