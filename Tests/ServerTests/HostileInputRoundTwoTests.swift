// Smaller holes of the second hostile-input audit (issue 29 items 15, 16, 17): ids are ASCII hex,
// every kept item is JSON, and text cannot reorder a page with bidi controls.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class HostileInputRoundTwoTests: XCTestCase {
    func testFullwidthDigitsAreNoEventID() throws {
        let fullwidth = String(repeating: "\u{FF10}", count: 32)
        XCTAssertNil(EnvelopeDecoder.normalisedEventID(fullwidth))
        XCTAssertEqual(EnvelopeDecoder.normalisedEventID("0123456789ABCDEF0123456789abcdef"), "0123456789abcdef0123456789abcdef")
        let server = try TestServer()
        defer { server.stop() }
        var event = TestEvents.native(offsets: [0x10])
        event["event_id"] = .string(fullwidth)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event, header: ["event_id": .string(fullwidth)])).status, 200)
        try server.waitUntilIdle()
        let stored = try XCTUnwrap(
            try server.server.stores.issueReads.occurrences(
                issueID: XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first).id, limit: 1, offset: 0
            ).first)
        XCTAssertTrue(stored.eventID.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isASCIIHexDigit }, "a fresh id: \(stored.eventID)")
    }

    func testALogItemThatIsNotJSONIsRefusedAndNothingIsStored() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = Envelope(header: .object([:]), items: [Envelope.Item(type: "log", payload: Data("not json {".utf8))]).serialized()
        let r = server.sendEnvelope(body)
        XCTAssertEqual(r.status, 400, r.text)
        XCTAssertTrue(r.text.contains("item 0 (log)"), r.text)
        XCTAssertEqual(try server.server.stores.issueReads.itemCounts(projectID: server.projectID).byType["log"] ?? 0, 0)
    }

    func testBidiOverridesAndC1ControlsAreShownNotObeyedOnPages() throws {
        XCTAssertEqual(HTML.esc("pay\u{202E}txt.exe"), "pay[U+202E]txt.exe")
        XCTAssertEqual(HTML.esc("a\u{2066}b\u{9B}c"), "a[U+2066]b[U+9B]c")
        let server = try TestServer()
        defer { server.stop() }
        let e = TestEvents.native(offsets: [0x10, 0x20], functions: ["main", "invoice\u{202E}fdp.exe"])
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(e)).status, 200)
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let list = server.page("/ui/projects/default/issues", login).text
        XCTAssertFalse(list.unicodeScalars.contains { DisplayControls.isBidi($0.value) }, "no raw bidi control on the page")
        XCTAssertTrue(list.contains("invoice[U+202E]fdp.exe"), list)
    }

    /// Issue 29 item 5: a submission that names no install is counted under its sender's address,
    /// so naming none is no way around the per-install cap; one that names an install still has
    /// its own window. An address is a backend host or many users behind one NAT: ten times an
    /// install's room (InstallCaps).
    func testSubmissionsWithoutAnInstallIDAreCappedByAddress() throws {
        let server = try TestServer { $0.limits.eventsPerInstall = 3 }
        defer { server.stop() }
        for i in 0..<30 {
            let r = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10])))
            XCTAssertEqual(r.status, 200, "\(i): \(r.text)")
        }
        let over = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10])))
        XCTAssertEqual(over.status, 429, over.text)
        XCTAssertNotNil(over.headers["retry-after"])
        XCTAssertEqual(over.headers["x-sentry-rate-limits"].map { $0.hasSuffix(":error;default:key") }, true, "\(over.headers)")
        let logs = Envelope(header: [:], items: [Envelope.Item(type: "log", payload: Data(#"{"items":[]}"#.utf8))]).serialized()
        XCTAssertEqual(server.sendEnvelope(logs).status, 200, "other items have a window of their own")
        let named = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: "install-1")))
        XCTAssertEqual(named.status, 200, "an install of its own has its own window")
        let spoofed = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: "address:127.0.0.1")))
        XCTAssertEqual(spoofed.status, 200, "a client cannot name the address window as its install")
        try server.waitUntilIdle()
        XCTAssertEqual(try server.storedCount(), 32)
    }

    /// An operator's huge `--install-cap`, scaled for addresses and items, saturates: no cap, no trap.
    func testAHugeInstallCapIsNoCapNotATrap() throws {
        let server = try TestServer { $0.limits.eventsPerInstall = Int.max / 2 }
        defer { server.stop() }
        let session: JSONValue = ["sid": "s", "init": true, "status": "ok"]
        let body = TestEvents.envelope(TestEvents.native(offsets: [0x10]), extraItems: [Envelope.Item(type: "session", payload: session.serialized())])
        XCTAssertEqual(server.sendEnvelope(body).status, 200)
    }

    /// A web backend with tracing (a transaction per request, no install id): its transactions
    /// never use up the room its errors have, and when its other items are over their window an
    /// error that comes with them is still kept (they are left out).
    func testABackendsTransactionsNeverCostItsErrors() throws {
        let server = try TestServer { $0.limits.eventsPerInstall = 1 }
        defer { server.stop() }
        let reports = Envelope(
            header: [:], items: Array(repeating: Envelope.Item(type: "client_report", payload: Data("{}".utf8)), count: 100)
        ).serialized()
        for i in 0..<10 { XCTAssertEqual(server.sendEnvelope(reports).status, 200, "\(i)") }  // 1,000: the address's room for items
        let session: JSONValue = ["sid": "s", "init": true, "status": "ok", "attrs": ["release": "web@1"]]
        let withSession = TestEvents.envelope(
            TestEvents.native(offsets: [0x10]), extraItems: [Envelope.Item(type: "session", payload: session.serialized())])
        XCTAssertEqual(server.sendEnvelope(withSession).status, 200, "the error is kept")
        try server.waitUntilIdle()
        XCTAssertEqual(try server.storedCount(), 1)
        XCTAssertNil(try server.server.stores.issueReads.itemCounts(projectID: server.projectID).byType["session"], "its session was left out")
        let refused = server.sendEnvelope(Envelope(header: [:], items: [Envelope.Item(type: "session", payload: session.serialized())]).serialized())
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.headers["x-sentry-rate-limits"].map { $0.hasSuffix(":session:key") }, true, "\(refused.headers)")
    }
}
