// The read APIs behind the server token that read bounded data: logs, releases and sessions per
// release, as JSON in keyset pages (`Link: …; rel="next"; results="…"; cursor="…"`). The real
// Python sentry-sdk sends the logs and sessions where it can; raw envelopes fill in crashes and
// page boundaries.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LogsAndReleasesAPITests: XCTestCase {
    /// The `cursor` of a response's `Link`, nil when it says there are no more results.
    static func next(_ r: RawHTTP.Response) -> String? {
        guard let link = r.headers["link"], link.contains("results=\"true\"") else { return nil }
        return link.range(of: "cursor=\"[0-9a-f]*\"", options: .regularExpression).map { String(link[$0].dropFirst(8).dropLast()) }
    }

    /// The `Link` names the next page as a whole URL, as Sentry's does: a script that follows it
    /// as a URL (Python's requests: `r.links["next"]["url"]`) gets the next page, not an error.
    func testTheLinkIsAWholeURLThatPythonRequestsFollows() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        for i in 0..<3 {
            let log: JSONValue = ["items": [["timestamp": .double(Date().timeIntervalSince1970), "level": "info", "body": .string("line \(i)")]]]
            XCTAssertEqual(server.sendEnvelope(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: log.serialized())]).serialized()).status, 200)
        }
        let link = try XCTUnwrap(server.get("/api/0/projects/faultline/\(server.projectID)/logs/?limit=1").headers["link"])
        XCTAssertTrue(link.hasPrefix("<http://127.0.0.1:\(server.port)/api/0/projects/faultline/"), link)
        let script = """
            import sys, json, urllib.request
            url, token = sys.argv[1], sys.argv[2]
            bodies = []
            while url and len(bodies) < 10:
                req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
                with urllib.request.urlopen(req) as r:
                    bodies += [l["body"] for l in json.load(r)]
                    link = r.headers.get("Link", "")
                # the standard parse of an RFC 8288 header, as requests' r.links does
                url = None
                for part in link.split(","):
                    target, *params = part.split(";")
                    if any(p.strip() == 'rel="next"' for p in params) and 'results="true"' in part:
                        url = target.strip()[1:-1]
            print(json.dumps(bodies))
            """
        let dir = TestSupport.makeTemporaryDirectory("link-follow")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try script.write(toFile: dir + "/follow.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(
            python, [dir + "/follow.py", "http://127.0.0.1:\(server.port)/api/0/projects/faultline/\(server.projectID)/logs/?limit=1", server.token])
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertEqual(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines), #"["line 2", "line 1", "line 0"]"#)
    }

    func testPythonSDKLogsAndSessionsThroughTheAPI() throws {
        guard let python = ThirdParty.python() else { return XCTFail("python3 is not installed") }
        guard try TestSupport.run(python, ["-c", "import sentry_sdk"]).exitCode == 0 else { return XCTFail("sentry-sdk is not installed") }
        let server = try TestServer()
        defer { server.stop() }
        let dir = TestSupport.makeTemporaryDirectory("faultline-py-logs")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = """
            import sys, sentry_sdk
            from sentry_sdk import logger as slog
            sentry_sdk.init(dsn=sys.argv[1], default_integrations=False, release="py@2.0", enable_logs=True)
            slog.info("Order {order_id} placed", order_id=42)
            slog.error("payment failed for {user}", user="ann")
            scope = sentry_sdk.get_isolation_scope()
            for _ in range(3):
                scope.start_session(session_mode="application")
                scope.end_session()
            sentry_sdk.flush(10)
            """
        try script.write(toFile: dir + "/send.py", atomically: false, encoding: .utf8)
        let r = try TestSupport.run(python, [dir + "/send.py", server.dsn], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)

        let base = "/api/0/projects/faultline/\(server.projectID)"
        let all = try XCTUnwrap(try server.getJSON(base + "/logs/").arrayValue)
        XCTAssertEqual(Set(all.compactMap { $0["body"]?.stringValue }), ["Order 42 placed", "payment failed for ann"], "\(all)")
        XCTAssertEqual(all.first?["release"]?.stringValue, "py@2.0")
        XCTAssertEqual(try server.getJSON(base + "/logs/?level=error").arrayValue?.compactMap { $0["body"]?.stringValue }, ["payment failed for ann"])
        XCTAssertEqual(try server.getJSON(base + "/logs/?q=placed").arrayValue?.count, 1)
        XCTAssertEqual(try server.getJSON(base + "/logs/?release=py@2.0").arrayValue?.count, 2)
        XCTAssertEqual(try server.getJSON(base + "/logs/?release=other").arrayValue?.count, 0)
        XCTAssertEqual(try server.getJSON(base + "/logs/?since=\(Int(Date().timeIntervalSince1970) + 3600)").arrayValue?.count, 0)
        XCTAssertEqual(try server.getJSON(base + "/logs/?since=2020-01-01T00:00:00Z").arrayValue?.count, 2)
        XCTAssertEqual(server.get(base + "/logs/?since=yesterday").status, 400)

        let sessions = try XCTUnwrap(try server.getJSON(base + "/sessions/").arrayValue)
        let py = try XCTUnwrap(sessions.first { $0["release"]?.stringValue == "py@2.0" })
        XCTAssertEqual(py["sessions"]?.int64Value, 3, "\(sessions)")
        XCTAssertEqual(py["crashed"]?.int64Value, 0)
        XCTAssertEqual(py["crash_free_rate"]?.doubleValue, 1.0)
    }

    func testLogsPageThroughItemsWithTheLinkCursor() throws {
        let server = try TestServer()
        defer { server.stop() }
        for i in 0..<3 {
            let log: JSONValue = ["items": [["timestamp": .double(Date().timeIntervalSince1970), "level": "info", "body": .string("line \(i)")]]]
            let env = Envelope(header: [:], items: [Envelope.Item(type: "log", payload: log.serialized())])
            XCTAssertEqual(server.sendEnvelope(env.serialized()).status, 200)
        }
        var seen: [String] = []
        var path = "/api/0/projects/faultline/\(server.projectID)/logs/?limit=1"
        for _ in 0..<5 {
            let r = server.get(path)
            XCTAssertEqual(r.status, 200, r.text)
            seen += r.json?.arrayValue?.compactMap { $0["body"]?.stringValue } ?? []
            guard let cursor = Self.next(r) else { break }
            path = "/api/0/projects/faultline/\(server.projectID)/logs/?limit=1&cursor=\(cursor)"
        }
        XCTAssertEqual(seen, ["line 2", "line 1", "line 0"])
        XCTAssertEqual(server.get("/api/0/projects/faultline/\(server.projectID)/logs/?cursor=zz").status, 400)
        XCTAssertEqual(server.get("/api/0/projects/faultline/\(server.projectID)/logs/?cursor=\(KeysetHex.of("x"))").status, 400)
        // The token is required; a public key is not one.
        XCTAssertEqual(RawHTTP.send(port: server.port, method: "GET", path: "/api/0/projects/faultline/\(server.projectID)/logs/").status, 401)
        XCTAssertEqual(server.get("/api/0/projects/faultline/\(server.projectID)/sessions/", token: server.publicKey).status, 401)
    }

    func testSessionsGiveTheCrashFreeRatePerReleaseInPages() throws {
        let server = try TestServer()
        defer { server.stop() }
        func aggregate(_ release: String, exited: Int, crashed: Int) -> Data {
            let payload: JSONValue = [
                "attrs": ["release": .string(release), "environment": "production"],
                "aggregates": [["started": "2026-12-01T00:00:00Z", "exited": .int(Int64(exited)), "crashed": .int(Int64(crashed))]]
            ]
            return Envelope(header: [:], items: [Envelope.Item(type: "sessions", payload: payload.serialized())]).serialized()
        }
        XCTAssertEqual(server.sendEnvelope(aggregate("a@1", exited: 6, crashed: 2)).status, 200)
        XCTAssertEqual(server.sendEnvelope(aggregate("b@2", exited: 5, crashed: 0)).status, 200)
        XCTAssertEqual(server.sendEnvelope(aggregate("c@3", exited: 0, crashed: 1)).status, 200)
        let base = "/api/0/projects/faultline/\(server.projectID)/sessions/"
        let first = server.get(base + "?limit=2")
        XCTAssertEqual(first.status, 200, first.text)
        let rows = try XCTUnwrap(first.json?.arrayValue)
        XCTAssertEqual(rows.compactMap { $0["release"]?.stringValue }, ["a@1", "b@2"])
        XCTAssertEqual(rows[0]["sessions"]?.int64Value, 8)
        XCTAssertEqual(rows[0]["crashed"]?.int64Value, 2)
        XCTAssertEqual(rows[0]["crash_free_rate"]?.doubleValue, 0.75)
        XCTAssertEqual(rows[0]["environments"]?["production"]?["sessions"]?.int64Value, 8)
        let cursor = try XCTUnwrap(Self.next(first))
        let second = server.get(base + "?limit=2&cursor=\(cursor)")
        XCTAssertEqual(second.json?.arrayValue?.compactMap { $0["release"]?.stringValue }, ["c@3"])
        XCTAssertEqual(second.json?.arrayValue?.first?["crash_free_rate"]?.doubleValue, 0)
        XCTAssertNil(Self.next(second))

        // A release's Sentry `healthData` (`?health=1`, below the project's path).
        let releases = "/api/0/projects/faultline/\(server.bootstrap.project.slug)/releases/"
        let created = RawHTTP.send(
            port: server.port, method: "POST", path: releases, headers: ["Authorization": "Bearer \(server.token)"],
            body: (["version": "a@1"] as JSONValue).serialized())
        XCTAssertEqual(created.status, 201, created.text)
        let health = try XCTUnwrap(server.get(releases + "a@1/?health=1").json?["projects"]?.arrayValue?.first?["healthData"])
        XCTAssertEqual(health["totalSessions"]?.int64Value, 8)
        XCTAssertEqual(health["sessionsCrashed"]?.int64Value, 2)
        XCTAssertEqual(health["crashFreeSessions"]?.doubleValue, 75)
        XCTAssertNil(server.get(releases + "a@1/").json?["projects"]?.arrayValue?.first?["healthData"])
        XCTAssertEqual(server.get(releases + "?health=1").json?.arrayValue?.first?["projects"]?[0]?["healthData"]?["totalSessions"]?.int64Value, 8)
    }

    /// The SDK delivers at least once: a kill between the server's 200 and the outbox file's
    /// removal sends an update again. A session still counts once, and a crash once.
    func testASessionUpdateSentTwiceCountsOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        func update(_ sid: String, initial: Bool, status: String) -> Data {
            var s: JSONValue = ["sid": .string(sid), "status": .string(status), "attrs": ["release": "d@1", "environment": "production"]]
            if initial { s["init"] = true }
            return Envelope(header: [:], items: [Envelope.Item(type: "session", payload: s.serialized())]).serialized()
        }
        let a = UUID().uuidString.lowercased(), b = UUID().uuidString.lowercased()
        for body in [update(a, initial: true, status: "ok"), update(a, initial: true, status: "ok"), update(a, initial: false, status: "exited")] {
            XCTAssertEqual(server.sendEnvelope(body).status, 200)
        }
        for body in [update(b, initial: true, status: "crashed"), update(b, initial: true, status: "crashed")] {
            XCTAssertEqual(server.sendEnvelope(body).status, 200)
        }
        let row = server.get("/api/0/projects/faultline/\(server.projectID)/sessions/").json?.arrayValue?.first { $0["release"]?.stringValue == "d@1" }
        XCTAssertEqual(row?["sessions"]?.int64Value, 2, "two sessions, each sent twice")
        XCTAssertEqual(row?["crashed"]?.int64Value, 1)
        XCTAssertEqual(row?["crash_free_rate"]?.doubleValue, 0.5)

        // Crashes of sessions whose opening update never came outnumber the sessions seen: the
        // rate is 0, on the page as in the API, never below.
        XCTAssertEqual(server.sendEnvelope(update(UUID().uuidString, initial: true, status: "exited")).status, 200)
        for _ in 0..<3 { XCTAssertEqual(server.sendEnvelope(update(UUID().uuidString, initial: false, status: "crashed")).status, 200) }
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/projects/default/health", login).text
        XCTAssertTrue(page.contains("<td class=\"num\">3</td><td class=\"num\">4</td><td class=\"num\">0.00 %</td>"), "3 sessions, 4 crashes: \(page)")
    }

    func testReleasesListInKeysetPagesNewestFirst() throws {
        let server = try TestServer()
        defer { server.stop() }
        let base = "/api/0/projects/faultline/\(server.bootstrap.project.slug)/releases/"
        for name in ["1.0", "1.1", "2.0 beta-é"] {
            let r = RawHTTP.send(
                port: server.port, method: "POST", path: base, headers: ["Authorization": "Bearer \(server.token)", "Content-Type": "application/json"],
                body: (["version": .string(name)] as JSONValue).serialized())
            XCTAssertEqual(r.status, 201, r.text)
        }
        var seen: [String] = []
        var path = base + "?limit=2"
        for _ in 0..<4 {
            let r = server.get(path)
            XCTAssertEqual(r.status, 200, r.text)
            seen += r.json?.arrayValue?.compactMap { $0["version"]?.stringValue } ?? []
            guard let cursor = Self.next(r) else { break }
            path = base + "?limit=2&cursor=\(cursor)"
        }
        XCTAssertEqual(seen, ["2.0 beta-é", "1.1", "1.0"])
        // The organization-wide list pages the same way.
        XCTAssertEqual(server.get("/api/0/organizations/faultline/releases/?limit=1").json?.arrayValue?.count, 1)
        XCTAssertEqual(server.get(base + "?cursor=\(KeysetHex.of("no position"))").status, 400)
    }
}

/// A cursor's wire form for tests that forge one.
enum KeysetHex {
    static func of(_ s: String) -> String { s.utf8.map { String(format: "%02x", $0) }.joined() }
}
