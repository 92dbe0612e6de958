// Automatic backfill with the real symbolicator: occurrences stored before their debug file
// arrived are re-symbolicated and regrouped when it is uploaded; old issue ids still resolve.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class BackfillTests: XCTestCase {
    func testABackfillCutShortByAStopRunsAgainAtTheNextStart() throws {
        let server = try TestServer()
        let work = TestSupport.makeTemporaryDirectory("faultline-backfill-resume")
        defer { try? FileManager.default.removeItem(atPath: work); try? FileManager.default.removeItem(atPath: server.dataDirectory) }
        let program = try Fixtures.buildProgram(in: work)
        for _ in 0..<5 { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program, release: "r1"))).status, 200) }
        try server.waitUntilIdle()
        // The backfill thread is gone (as after a kill at the wrong moment): the upload is
        // acknowledged and stored, but its backfill never runs in this process.
        server.server.backfiller.stop()
        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        let token = server.token, project = server.projectID
        server.stop(removeData: false)

        let config = try ServerConfiguration.test(dataDirectory: server.dataDirectory)
        let restarted = try Server(config: config)
        try restarted.start()
        defer { restarted.stop() }
        let deadline = Date().addingTimeInterval(30)
        var issues: [JSONValue] = []
        while Date() < deadline {
            let r = RawHTTP.send(
                port: restarted.port, method: "GET", path: "/api/0/projects/faultline/\(project)/issues/",
                headers: ["Authorization": "Bearer \(token)"])
            issues = (try? JSONValue.parse(r.body))?.arrayValue ?? []
            if issues.count == 1, issues[0]["symbolicated"]?.boolValue == true { break }
            usleep(50_000)
        }
        XCTAssertEqual(issues.count, 1)
        XCTAssertEqual(issues.first?["symbolicated"]?.boolValue, true, "the restart finished the lost backfill: \(issues)")
    }

    func testLateDebugFileResymbolicatesAndRegroupsEveryOccurrence() throws {
        let server = try TestServer()
        defer { server.stop() }
        let work = TestSupport.makeTemporaryDirectory("faultline-backfill")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        let leaf = try XCTUnwrap(program.symbols["faultline_fixture_leaf"])
        let middle = try XCTUnwrap(program.symbols["faultline_fixture_middle"])
        let main = try XCTUnwrap(program.symbols["main"])

        // Two crash sites in the same functions at different addresses: two issues before symbols.
        let n = 60
        for i in 0..<n {
            var event = Fixtures.crashEvent(program, release: "fixture@\(i % 2)")
            if i % 3 == 0 {
                event = TestEvents.native(
                    buildID: program.buildID.hex, modulePath: "/opt/fixture/bin/fixture", base: 0x5600_0000_0000,
                    offsets: [main + 8, middle + 4, leaf + 1], release: "fixture@\(i % 2)")
            }
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        }
        try server.waitUntilIdle()
        let before = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(before.count, 2)
        XCTAssertTrue(before.allSatisfy { $0["symbolicated"]?.boolValue == false })
        let oldIDs = before.compactMap { $0["id"]?.stringValue }

        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        try server.waitUntilIdle()

        let after = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(after.count, 1, "both crash sites are the same functions: one issue")
        let issue = try XCTUnwrap(after.first)
        XCTAssertEqual(issue["count"]?.int64Value, Int64(n))
        XCTAssertEqual(issue["symbolicated"]?.boolValue, true)
        XCTAssertTrue(issue["title"]?.stringValue?.contains("faultline_fixture_leaf") ?? false, issue.jsonString)
        XCTAssertEqual(Set(issue["releases"]?.arrayValue?.compactMap(\.stringValue) ?? []), ["fixture@0", "fixture@1"])
        let newID = try XCTUnwrap(issue["id"]?.stringValue)
        XCTAssertTrue(oldIDs.contains(newID), "the surviving issue keeps one of the old ids")
        for old in oldIDs {
            let resolved = try server.getJSON("/api/0/issues/\(old)/")
            XCTAssertEqual(resolved["id"]?.stringValue, newID, "old id \(old) must resolve to the merged issue")
        }
        // Every occurrence reads as the surviving issue's, also those still stored under the merged id.
        let events = try server.getJSON("/api/0/issues/\(newID)/events/?limit=100").arrayValue ?? []
        XCTAssertEqual(events.count, n)
        XCTAssertTrue(events.allSatisfy { $0["issue"]?.stringValue == newID }, "\(events.map { $0["issue"] })")
        for old in oldIDs where old != newID {
            XCTAssertEqual(try server.getJSON("/api/0/issues/\(old)/events/?limit=100").arrayValue?.count, n, "an old id lists the issue it resolves to")
        }
        // The representative stack is symbolicated, innermost first, with files and lines.
        let detail = try server.getJSON("/api/0/issues/\(newID)/")
        let frames = detail["stack"]?.arrayValue ?? []
        XCTAssertEqual(frames.compactMap { $0["function"]?.stringValue }, ["faultline_fixture_leaf", "faultline_fixture_middle", "main"])
        XCTAssertTrue(frames.allSatisfy { ($0["filename"]?.stringValue ?? "").hasSuffix("fixture0.c") && ($0["lineno"]?.int64Value ?? 0) > 0 }, "\(frames)")

        // Progress is visible and each unique address was symbolicated once.
        let backfills = try server.getJSON("/api/0/backfills/").arrayValue ?? []
        XCTAssertEqual(backfills.first?["state"]?.stringValue, "done")
        XCTAssertEqual(backfills.first?["occurrences"]?.int64Value, Int64(n))
        XCTAssertEqual(backfills.first?["occurrences_done"]?.int64Value, Int64(n))
        XCTAssertEqual(backfills.first?["addresses_symbolicated"]?.int64Value, 4)
        XCTAssertEqual(backfills.first?["issues_merged"]?.int64Value, 1)

        // A new occurrence after the upload is grouped with symbols straight away.
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        try server.waitUntilIdle()
        let final = try server.getJSON("/api/0/issues/\(newID)/")
        XCTAssertEqual(final["count"]?.int64Value, Int64(n + 1))
    }

    /// One issue made of two stacks (the client sent the same function names for both) splits when
    /// real symbols show they are different code; counts follow the occurrences, the old id survives.
    func testBackfillSplitsAnIssueWhoseStacksAreDifferentCode() throws {
        let server = try TestServer()
        defer { server.stop() }
        let work = TestSupport.makeTemporaryDirectory("faultline-backfill-split")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        let leaf = try XCTUnwrap(program.symbols["faultline_fixture_leaf"])
        let middle = try XCTUnwrap(program.symbols["faultline_fixture_middle"])
        let main = try XCTUnwrap(program.symbols["main"])
        func send(_ offsets: [UInt64], _ count: Int) {
            for _ in 0..<count {
                let e = TestEvents.native(
                    buildID: program.buildID.hex, modulePath: "/opt/fixture/bin/fixture", base: 0x5600_0000_0000,
                    offsets: offsets, functions: ["app_main", "app_crash"])
                XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
            }
        }
        send([main + 8, leaf], 7)  // really main → leaf
        send([main + 8, middle + 4], 5)  // really main → middle
        try server.waitUntilIdle()
        let before = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(before.count, 1)
        let oldID = try XCTUnwrap(before.first?["id"]?.stringValue)

        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        try server.waitUntilIdle()
        let after = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(after.map { $0["count"]?.int64Value ?? 0 }.sorted(), [5, 7])
        XCTAssertTrue(after.allSatisfy { $0["symbolicated"]?.boolValue == true })
        XCTAssertTrue(after.contains { $0["id"]?.stringValue == oldID }, "the old issue keeps one of the two stacks")
        let titles = after.compactMap { $0["title"]?.stringValue }
        XCTAssertTrue(titles.contains { $0.contains("faultline_fixture_leaf") } && titles.contains { $0.contains("faultline_fixture_middle") }, "\(titles)")
    }

    /// The lookup index is built and persisted when the file arrives, not at the first crash.
    func testIndexIsBuiltOnArrival() throws {
        let server = try TestServer()
        defer { server.stop() }
        let work = TestSupport.makeTemporaryDirectory("faultline-index")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        try server.waitUntilIdle()
        let index = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory + "/index")
        XCTAssertTrue(index.contains { $0.hasPrefix(program.buildID.hex) }, "\(index)")
        let backfills = try server.getJSON("/api/0/backfills/").arrayValue ?? []
        XCTAssertEqual(backfills.first?["state"]?.stringValue, "done")
        XCTAssertEqual(backfills.first?["occurrences"]?.int64Value, 0)
    }
}
