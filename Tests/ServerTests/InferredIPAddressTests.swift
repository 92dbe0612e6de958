// `{{auto}}` and the other address rules of Relay: the rules on trees, then end to end through a
// real server, directly and behind a trusted proxy, with every other member of the event kept.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class InferredIPAddressTests: XCTestCase {
    func testRelaysRulesInItsOrder() {
        let client = "198.51.100.7"
        func fill(_ e: JSONValue, _ c: String? = client) -> JSONValue? { InferredIPAddress.filled(e, client: c) }
        XCTAssertEqual(fill(["user": ["id": "1", "ip_address": "{{auto}}"]])?["user"], ["id": "1", "ip_address": .string(client)])
        XCTAssertEqual(fill(["request": ["env": ["REMOTE_ADDR": "{{auto}}"]]])?["request"]?["env"]?["REMOTE_ADDR"], .string(client))
        XCTAssertEqual(fill(["request": ["env": ["REMOTE_ADDR": "{{auto}}"]]])?["user"]?["ip_address"], .string(client), "then copied to the user")
        XCTAssertEqual(fill(["request": ["env": ["REMOTE_ADDR": "2001:db8::5"]], "user": ["id": "1"]])?["user"]?["ip_address"], "2001:db8::5")
        XCTAssertNil(fill(["request": ["env": ["REMOTE_ADDR": "not an address"]]]), "only an address is copied")
        XCTAssertEqual(fill(["platform": "javascript"])?["user"], ["ip_address": .string(client)], "browser SDKs never set it")
        XCTAssertEqual(fill(["platform": "cocoa", "user": ["ip_address": .null]])?["user"]?["ip_address"], .string(client))
        XCTAssertNil(fill(["platform": "javascript", "sdk": ["settings": ["infer_ip": "never"]]]), "the SDK said never")
        let never: JSONValue = [
            "platform": "javascript", "sdk": ["settings": ["infer_ip": "never"]], "user": ["id": "1", "ip_address": "{{auto}}"],
            "request": ["env": ["REMOTE_ADDR": "{{auto}}"]]
        ]
        XCTAssertEqual(fill(never)?["user"], ["id": "1"], "never: the placeholder goes, no address comes")
        XCTAssertEqual(fill(never)?["request"], ["env": [:]])
        XCTAssertNil(fill(["sdk": ["settings": ["infer_ip": "never"]], "request": ["env": ["REMOTE_ADDR": "10.0.0.1"]]]), "never: not copied")
        XCTAssertNil(fill(["platform": "cocoa", "sdk": ["settings": ["infer_ip": "Never"]]]), "a setting Relay does not know is never")
        XCTAssertEqual(fill(["platform": "cocoa", "sdk": ["settings": ["infer_ip": "legacy"]]])?["user"]?["ip_address"], .string(client))
        XCTAssertEqual(fill(["platform": "native", "sdk": ["settings": ["infer_ip": "auto"]]])?["user"]?["ip_address"], .string(client))
        XCTAssertNil(fill(["platform": "native"]), "other platforms are not given an address they did not ask for")
        XCTAssertNil(fill(["platform": "javascript", "user": ["ip_address": "203.0.113.1"]]), "an address sent is kept")
        XCTAssertNil(fill(["platform": "javascript", "user": "someone"]), "a user that is not an object is left as sent")
        XCTAssertEqual(
            fill(["user": ["id": "1", "ip_address": "{{auto}}"]], nil)?["user"], ["id": "1"],
            "no client address (an IPv6 /64 behind a proxy, a project that keeps none): the placeholder goes")
        XCTAssertTrue(InferredIPAddress.isIPAddress("127.0.0.1"))
        XCTAssertTrue(InferredIPAddress.isIPAddress("::1"))
        XCTAssertFalse(InferredIPAddress.isIPAddress("2001:db8:1:2::/64"))
        XCTAssertFalse(InferredIPAddress.isIPAddress("localhost"))
    }

    /// Ingest decides whether to keep the client's address without filling the event in: the
    /// shortcut agrees with the rules themselves (the address is kept exactly when filling with
    /// it and filling without it give different events) on every combination of the members the
    /// rules read.
    func testTheKeptAddressFollowsTheRulesOnEveryCombination() {
        let client = "198.51.100.7"
        let users: [JSONValue?] = [nil, .null, "someone", [:], ["id": "1"], ["ip_address": "{{auto}}"], ["ip_address": "203.0.113.1"], ["ip_address": .null]]
        let remotes: [JSONValue?] = [nil, "{{auto}}", "10.0.0.1", "not an address"]
        let platforms: [JSONValue?] = [nil, "javascript", "native", "cocoa"]
        let inferences: [JSONValue?] = [nil, "legacy", "auto", "never", "Never"]
        var checked = 0
        for user in users {
            for remote in remotes {
                for platform in platforms {
                    for inference in inferences {
                        var event = JSONObject()
                        if let user { event["user"] = user }
                        if let remote { event["request"] = ["env": ["REMOTE_ADDR": remote]] }
                        if let platform { event["platform"] = platform }
                        if let inference { event["sdk"] = ["settings": ["infer_ip": inference]] }
                        let e = JSONValue.object(event)
                        let byRules = InferredIPAddress.filled(e, client: client) != InferredIPAddress.filled(e, client: nil)
                        let kept = InferredIPAddress.addressToKeep(for: e, clientAddress: client) != nil
                        XCTAssertEqual(kept, byRules, "\(String(decoding: e.serialized(), as: UTF8.self))")
                        checked += 1
                    }
                }
            }
        }
        XCTAssertEqual(checked, 640)
        XCTAssertNil(InferredIPAddress.addressToKeep(for: ["user": ["ip_address": "{{auto}}"]], clientAddress: "2001:db8:1:2::/64"), "not an address")
    }

    func testTheAddressTheEventCameFromReplacesTheAutoPlaceholder() throws {
        let server = try TestServer { c in c.http.trustedProxies = TrustedProxies(parsing: ["127.0.0.1"])! }
        defer { server.stop() }
        func send(_ id: String, _ event: JSONValue, forwardedFor: String? = nil) throws -> JSONValue {
            var e = event
            e["event_id"] = .string(id)
            let r = server.sendEnvelope(TestEvents.envelope(e), extraHeaders: forwardedFor.map { ["X-Forwarded-For": $0] } ?? [:])
            XCTAssertEqual(r.status, 200, r.text)
            try server.waitUntilIdle()
            return try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")["event"])
        }
        let browser: JSONValue = [
            "platform": "javascript", "message": "clicked", "user": ["id": "u-9", "ip_address": "{{auto}}"],
            "breadcrumbs": ["values": [["message": "kept crumb"]]], "extra": ["kept": "extra value"]
        ]
        let direct = try send("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", browser)
        XCTAssertEqual(direct["user"]?["ip_address"], "127.0.0.1", "\(direct)")
        XCTAssertEqual(direct["user"]?["id"], "u-9")
        let text = String(decoding: direct.serialized(), as: UTF8.self)
        XCTAssertTrue(text.contains("kept crumb") && text.contains("extra value"), "every other member stays: \(text.prefix(400))")
        let proxied = try send("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", browser, forwardedFor: "203.0.113.50")
        XCTAssertEqual(proxied["user"]?["ip_address"], "203.0.113.50", "the client a trusted proxy names: \(proxied)")
        let server6 = try send("c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3", ["platform": "python", "message": "x", "request": ["env": ["REMOTE_ADDR": "{{auto}}"]]])
        XCTAssertEqual(server6["request"]?["env"]?["REMOTE_ADDR"], "127.0.0.1")
        XCTAssertEqual(server6["user"]?["ip_address"], "127.0.0.1")
        let native = try send("d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4", ["platform": "native", "message": "y"])
        XCTAssertNil(native["user"]?["ip_address"], "no address for an SDK that did not ask")
        // What is kept with each occurrence: the address only where the event's rules use it.
        func kept(_ id: String) throws -> String? {
            try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id)).clientAddress
        }
        XCTAssertEqual(try kept("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"), "127.0.0.1")
        XCTAssertEqual(try kept("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"), "203.0.113.50")
        XCTAssertNil(try kept("d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"), "not stored for an event that did not ask")
        let never = try send(
            "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5",
            ["platform": "javascript", "message": "z", "sdk": ["settings": ["infer_ip": "never"]], "user": ["ip_address": "{{auto}}"]])
        XCTAssertEqual(never["user"], [:], "never: the placeholder is not shown, and no address")
        XCTAssertNil(try kept("e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"))
    }

    /// `faultline projects ip-addresses PROJECT off`: no address is kept and none is shown.
    func testAProjectThatKeepsNoAddressesKeepsNone() throws {
        let server = try TestServer()
        defer { server.stop() }
        let exe = TestSupport.product("faultline")
        let cli = ["projects", "--data-dir", server.dataDirectory] + (try TestDatabase.serveArguments(dataDirectory: server.dataDirectory))
        let off = try TestSupport.run(exe, cli + ["ip-addresses", String(server.projectID), "off"])
        XCTAssertEqual(off.exitCode, 0, off.description)
        XCTAssertTrue(off.stdout.contains("does not keep"), off.description)
        XCTAssertTrue(try TestSupport.run(exe, cli + ["ip-addresses", String(server.projectID)]).stdout.contains("does not keep"))
        XCTAssertEqual(try TestSupport.run(exe, cli + ["ip-addresses", String(server.projectID), "maybe"]).exitCode, 2)
        let id = "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"
        let event: JSONValue = ["event_id": .string(id), "platform": "javascript", "message": "m", "user": ["id": "u", "ip_address": "{{auto}}"]]
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        try server.waitUntilIdle()
        XCTAssertNil(try XCTUnwrap(try server.server.store.occurrence(projectID: server.projectID, eventID: id)).clientAddress)
        let read = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(id)/")["event"]
        XCTAssertEqual(read?["user"], ["id": "u"], "neither an address nor the placeholder")
    }
}
