// Tags on the pages (issue 33): the issues search takes any `key:value` an event's tags carried
// (`region:eu`, `os:Linux`), and the issue page breaks occurrences down by environment and OS
// beside release and install.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class IssueTagsTests: XCTestCase {
    func event(_ function: String, offset: UInt64, tags: JSONValue, os: JSONValue, environment: String) -> JSONValue {
        var e = TestEvents.native(offsets: [offset, offset + 0x40], functions: [function, function + "_caller"])
        e["tags"] = tags
        e["contexts"] = ["os": os]
        e["environment"] = .string(environment)
        return e
    }

    func testTermsOverTagsAndTheRestIsText() {
        var q = IssueQuery()
        q.text = "region:eu OS:Linux disk release:2 full"
        _ = q.applyTerms()
        XCTAssertEqual(q.tags, [EventTag(key: "region", value: "eu"), EventTag(key: "os.name", value: "Linux")])
        XCTAssertEqual(q.release, "2")
        XCTAssertEqual(q.text, "disk full")
        XCTAssertEqual(q.searchText, "disk full region:eu os.name:Linux", "the box shows the tag terms again")
        let tags = EventFields.tags(["tags": [["Shard", "7"], ["long", .string(String(repeating: "x", count: 201))]], "contexts": ["os": ["name": "Linux"]]])
        XCTAssertEqual(tags, [EventTag(key: "os.name", value: "Linux"), EventTag(key: "shard", value: "7")], "a value too long to search is left out, not cut")
        let many: JSONValue = [
            "level": "warn", "contexts": ["os": ["name": "Linux"]],
            "tags": .object(Dictionary(uniqueKeysWithValues: (0..<1000).map { ("t\($0)", JSONValue.string("v")) }))
        ]
        XCTAssertEqual(
            EventFields.tags(many).prefix(2), [EventTag(key: "level", value: "warning"), EventTag(key: "os.name", value: "Linux")],
            "the event's own fields first: a thousand tags do not push them past the cap")
    }

    func testSearchByTagAndBreakdownByEnvironmentAndOSInTheBrowser() throws {
        let server = try TestServer()
        defer { server.stop() }
        let linux6: JSONValue = ["name": "Linux", "version": "6.1.0"]
        server.ingest(event("alpha_crash", offset: 0x100, tags: ["region": "eu", "Shard": "7"], os: linux6, environment: "production"))
        server.ingest(event("alpha_crash", offset: 0x100, tags: ["region": "eu"], os: linux6, environment: "production"))
        server.ingest(event("alpha_crash", offset: 0x100, tags: ["region": "eu"], os: ["name": "Linux", "version": "5.10"], environment: "staging"))
        server.ingest(event("beta_crash", offset: 0x200, tags: [["region", "us"]], os: ["name": "FreeBSD"], environment: "production"))
        try server.waitUntilIdle()
        let issues = try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 10, offset: 0)
        let alpha = try XCTUnwrap(issues.first { $0.title.contains("alpha_crash") })

        let login = try XCTUnwrap(server.webLogin())
        func titles(_ search: String) -> [String] {
            let page = server.page("/ui/projects/default/issues?q=" + (search.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), login).text
            return ["alpha_crash", "beta_crash"].filter { page.contains($0) }
        }
        XCTAssertEqual(titles("region:us"), ["beta_crash"])
        XCTAssertEqual(titles("os:FreeBSD"), ["beta_crash"])
        XCTAssertEqual(titles("shard:7"), ["alpha_crash"], "tag keys match in any case")
        XCTAssertEqual(titles("region:eu os:Linux"), ["alpha_crash"], "every term must match")
        XCTAssertEqual(titles("region:eu beta"), [], "tags and text together")
        XCTAssertEqual(titles("region:mars"), [])

        let base = "http://127.0.0.1:\(server.port)"
        var steps = Browser.loginSteps(server)
        steps += [
            ["op": "goto", "url": .string(base + "/ui/projects/default/issues")],
            ["op": "fill", "selector": "form.filters input[name=q]", "value": "region:eu"],
            ["op": "submit", "selector": "form.filters button[type=submit]"],
            ["op": "eval", "save": "found", "expr": "[...document.querySelectorAll('tr.issue .title a')].map(a => a.textContent)"],
            ["op": "eval", "save": "box", "expr": "document.querySelector('form.filters input[name=q]').value"],
            ["op": "submit", "selector": "tr.issue .title a"],
            [
                "op": "eval", "save": "breakdown",
                "expr":
                    "Object.fromEntries([...document.querySelectorAll('table.breakdown')].map(t => [t.dataset.column, [...t.querySelectorAll('tbody tr')].map(r => r.cells[0].textContent + '=' + r.cells[1].textContent)]))"
            ],
            ["op": "eval", "save": "bars", "expr": "document.querySelectorAll('table.breakdown svg.share').length"]
        ]
        let r = try Browser.run(steps)
        let found = (r.values["found"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found.first?.contains("alpha_crash") == true, "\(found)")
        XCTAssertEqual(r.values["box"]?.stringValue, "region:eu")
        let b = try XCTUnwrap(r.values["breakdown"]?.objectValue, "\(r.values)")
        func column(_ name: String) -> [String] { (b[name]?.arrayValue ?? []).compactMap(\.stringValue) }
        XCTAssertEqual(column("environment"), ["production=2", "staging=1"])
        XCTAssertEqual(column("os"), ["Linux 6.1.0=2", "Linux 5.10=1"])
        XCTAssertEqual(column("release"), ["app@1.0=3"])
        XCTAssertGreaterThanOrEqual(r.values["bars"]?.int64Value ?? 0, 4)
        XCTAssertEqual(alpha.count, 3)
    }

    /// A data directory from before the breakdown columns (schema 13) gains them and the tags table
    /// at open; a row the older binary stored has neither (the page says "not recorded"), a new one both.
    func testASchema13DatabaseGainsTheColumnsAndTheTagsTable() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-breakdown-migration")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/faultline.sqlite"
        try SQLiteStore(path: path).close()
        let c = try SQLiteConnection(path: path)
        try c.exec(
            """
            DROP INDEX web_occurrences_breakdown; ALTER TABLE occurrences DROP COLUMN environment; ALTER TABLE occurrences DROP COLUMN os;
            DROP TABLE web_stack_tags;
            INSERT INTO occurrences(project_id, event_id, received, timestamp, release, install_id, event) VALUES(1, 'old', 1, 1, 'r', 'i', x'7b7d');
            PRAGMA user_version=13
            """)
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        var version = 0
        try c.query("PRAGMA user_version") { version = Int($0.int(0)) }
        XCTAssertEqual(version, SQLiteSchema.version)
        var e = IncomingEvent(
            projectID: 1, eventID: "new", received: 2, timestamp: 2, release: "r", installID: "i", compressedEvent: Data("{}".utf8))
        (e.environment, e.operatingSystem) = ("staging", "Linux 6.1")
        XCTAssertNotNil(try store.storeIngest(event: e, items: []))
        let rows = try store.reading { c in
            try c.rows("SELECT event_id, environment, os FROM occurrences ORDER BY id") { "\($0.text(0) ?? "")|\($0.text(1) ?? "-")|\($0.text(2) ?? "-")" }
        }
        XCTAssertEqual(rows, ["old|-|-", "new|staging|Linux 6.1"])
        XCTAssertEqual(try store.reading { c in try c.rows("SELECT count(*) FROM web_stack_tags") { $0.int(0) } }, [0])
        XCTAssertEqual(
            try store.reading { c in try c.rows("SELECT name FROM sqlite_master WHERE name = 'web_occurrences_breakdown'") { $0.text(0) ?? "" } },
            ["web_occurrences_breakdown"])
    }
    /// Migration 19: the rows of stacks retention deleted before it (they outlived their stack)
    /// are deleted, the rows of stacks still stored are kept, and both tables get their index by stack.
    func testASchema18DatabaseLosesTheRowsOfDeletedStacks() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-stack-rows-migration")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/faultline.sqlite"
        try SQLiteStore(path: path).close()
        let c = try SQLiteConnection(path: path)
        try c.exec(
            """
            DROP INDEX web_stack_envs_stack; DROP INDEX web_stack_tags_stack;
            INSERT INTO stacks(key, signature) VALUES('live', x'00');
            INSERT INTO web_stack_envs(environment, stack_key) VALUES('prod', 'live'), ('prod', 'gone'), ('dev', 'gone');
            INSERT INTO web_stack_tags(tag_key, tag_value, stack_key) VALUES('shard', 'a', 'live'), ('shard', 'a', 'gone');
            PRAGMA user_version=18
            """)
        let store = try SQLiteStore(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.reading { c in try c.rows("SELECT environment || '/' || stack_key FROM web_stack_envs") { $0.text(0) ?? "" } }, ["prod/live"])
        XCTAssertEqual(try store.reading { c in try c.rows("SELECT stack_key FROM web_stack_tags") { $0.text(0) ?? "" } }, ["live"])
        XCTAssertEqual(
            try store.reading { c in try c.rows("SELECT name FROM sqlite_master WHERE name LIKE 'web_stack_%_stack' ORDER BY name") { $0.text(0) ?? "" } },
            ["web_stack_envs_stack", "web_stack_tags_stack"])
    }
}
