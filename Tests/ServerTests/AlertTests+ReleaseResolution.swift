// Resolving in a release and ignoring for a count, as an operator does it, against the alert
// evaluator: a fix release named before it ships, Sentry's "latest", "the next release" in a
// project that has never named one, semantic versions, and an ignore that a merge must not use up.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

extension AlertTests {
    func put(_ server: TestServer, issue id: String, _ body: JSONValue) -> RawHTTP.Response {
        RawHTTP.send(
            port: server.port, method: "PUT", path: "/api/0/issues/\(id)/", headers: ["Authorization": "Bearer \(server.token)"],
            body: Data(body.jsonString.utf8))
    }

    func onlyIssue(_ server: TestServer) throws -> String {
        try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue?.first?["id"]?.stringValue)
    }

    func status(_ server: TestServer, _ id: String) throws -> String? { try server.getJSON("/api/0/issues/\(id)/")["status"]?.stringValue }

    /// The fix's release is named before anything of it arrived (releases that are not semantic
    /// versions are ordered by when the server first heard of them): a release first seen after
    /// that is newer and regresses, also when it is the first event after the resolve (the fix
    /// release was heard of only when compared with it, and so sorted after it).
    func testResolvedInAReleaseNotYetSeenALaterReleaseRegresses() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "regression"])
        send(server, count: 1, release: "build-january")
        try round(server)
        let id = try onlyIssue(server)
        XCTAssertEqual(put(server, issue: id, ["status": "resolved", "statusDetails": ["inRelease": "build-february"]]).status, 200)
        send(server, count: 1, release: "build-march")
        try round(server)
        XCTAssertEqual(try status(server, id), "unresolved", "a release first seen after the fix was named")
        XCTAssertEqual(webhookKinds(), ["regression"])
        let releases = (try server.getJSON("/api/0/organizations/faultline/releases/").arrayValue ?? []).compactMap { $0["version"]?.stringValue }
        XCTAssertEqual(Array(releases.prefix(3)), ["build-march", "build-february", "build-january"], "newest first")
    }

    /// Semantic versions of one package are compared as versions, whenever each was first seen:
    /// a hotfix of an older line does not regress an issue fixed in a newer one.
    func testSemanticVersionsOrderAsVersions() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "regression"])
        send(server, count: 1, release: "app@1.10.0")
        try round(server)
        let id = try onlyIssue(server)
        XCTAssertEqual(put(server, issue: id, ["status": "resolved", "statusDetails": ["inRelease": "app@2.0.0"]]).status, 200)
        for older in ["app@1.9.9", "app@2.0.0-rc.2", "app@1.10.1"] { send(server, count: 1, release: older) }
        try round(server)
        XCTAssertEqual(try status(server, id), "resolved", "older versions, though first seen after the fix")
        send(server, count: 1, release: "app@2.0.1")
        try round(server)
        XCTAssertEqual(try status(server, id), "unresolved")
        XCTAssertEqual(webhookKinds(), ["regression"])
        XCTAssertTrue(SemanticVersion("app@1.10.0")! > SemanticVersion("app@1.9.3")!)
        XCTAssertTrue(SemanticVersion("2.0.0-rc.1")! < SemanticVersion("2.0.0")!)
        XCTAssertTrue(SemanticVersion("2.0.0-rc.2")! < SemanticVersion("2.0.0-rc.10")!)
        XCTAssertEqual(SemanticVersion("1.2.3+build.7"), SemanticVersion("1.2.3+build.8"))
        XCTAssertNil(SemanticVersion("deadbeef"))
        XCTAssertFalse(SemanticVersion("a@1.0.0")!.isComparable(with: SemanticVersion("b@2.0.0")!))
    }

    /// Sentry's UI resolves "in the current release" as `inRelease: "latest"`: the newest release
    /// known, never a release named "latest".
    func testLatestMeansTheNewestReleaseKnown() throws {
        let server = try makeServer()
        defer { server.stop() }
        send(server, count: 1, release: "build-one")
        send(server, count: 1, release: "build-two")
        try round(server)
        let id = try onlyIssue(server)
        XCTAssertEqual(put(server, issue: id, ["status": "resolved", "statusDetails": ["inRelease": "latest"]]).status, 200)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["statusDetails"]?["inRelease"]?.stringValue, "build-two")
        let releases = (try server.getJSON("/api/0/organizations/faultline/releases/").arrayValue ?? []).compactMap { $0["version"]?.stringValue }
        XCTAssertFalse(releases.contains("latest"), "\(releases)")
        // What the server cannot honour is refused, not dropped.
        XCTAssertEqual(put(server, issue: id, ["status": "ignored", "statusDetails": ["ignoreUserCount": 5]]).status, 400)
        XCTAssertEqual(put(server, issue: id, ["status": "ignored", "statusDetails": ["ignoreCount": 5, "ignoreWindow": 60]]).status, 400)
        XCTAssertEqual(put(server, issue: id, ["status": "resolved", "statusDetails": ["inRelease": "r1\nr2"]]).status, 400)
        XCTAssertEqual(try status(server, id), "resolved", "nothing changed by refused updates")
    }

    /// "The next release" in a project that has named none yet: any release is the next one; an
    /// event that names no release is not.
    func testResolvedInTheNextReleaseWithoutAnyReleaseWaitsForOne() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "regression"])
        func sendWithoutRelease() {
            var event = TestEvents.native(offsets: [0x10, 0x20], functions: ["main", "noRelease"])
            event["release"] = nil
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        }
        sendWithoutRelease()
        try round(server)
        let id = try onlyIssue(server)
        XCTAssertEqual(put(server, issue: id, ["status": "resolved", "statusDetails": ["inNextRelease": true]]).status, 200)
        sendWithoutRelease()
        try round(server)
        XCTAssertEqual(try status(server, id), "resolved", "an event without a release is not the next release")
        XCTAssertEqual(hook.requests.count, 0)
        send(server, count: 1, release: "app@1.0", function: "noRelease")
        try round(server)
        XCTAssertEqual(try status(server, id), "unresolved")
        XCTAssertEqual(webhookKinds(), ["regression"])
    }

    /// "Ignore for 5 more events" counts events that arrive after the ignore: merging an issue
    /// with older events into it uses none of them up.
    func testAMergeIntoAnIgnoredIssueUsesNoneOfItsCount() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "regression"])
        send(server, count: 6, function: "older")
        send(server, count: 1, function: "ignored")
        try round(server)
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        func id(_ function: String) throws -> String {
            try XCTUnwrap(issues.first { $0["title"]?.stringValue?.contains(function) == true }?["id"]?.stringValue)
        }
        let (ignored, older) = (try id("ignored"), try id("older"))
        XCTAssertEqual(put(server, issue: ignored, ["status": "ignored", "statusDetails": ["ignoreCount": 5]]).status, 200)
        try IssueMerger.merge(Int64(older)!, into: Int64(ignored)!, in: server.server.store)
        send(server, count: 1, function: "ignored")
        try round(server)
        XCTAssertEqual(try status(server, ignored), "ignored", "one event since the ignore, not eight")
        send(server, count: 4, function: "ignored")
        try round(server)
        XCTAssertEqual(try status(server, ignored), "unresolved", "the fifth event since the ignore")
        XCTAssertEqual(webhookKinds(), ["unmuted"])
    }
}
