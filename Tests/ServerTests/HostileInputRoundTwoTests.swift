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
    /// its own window.
    func testSubmissionsWithoutAnInstallIDAreCappedByAddress() throws {
        let server = try TestServer { $0.limits.eventsPerInstall = 3 }
        defer { server.stop() }
        for i in 0..<3 {
            let r = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10])))
            XCTAssertEqual(r.status, 200, "\(i): \(r.text)")
        }
        let over = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10])))
        XCTAssertEqual(over.status, 429, over.text)
        XCTAssertNotNil(over.headers["retry-after"])
        let logs = Envelope(header: [:], items: [Envelope.Item(type: "log", payload: Data(#"{"items":[]}"#.utf8))]).serialized()
        XCTAssertEqual(server.sendEnvelope(logs).status, 429, "items without an install id count the same")
        let named = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: "install-1")))
        XCTAssertEqual(named.status, 200, "an install of its own has its own window")
        let spoofed = server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: "address:127.0.0.1")))
        XCTAssertEqual(spoofed.status, 200, "a client cannot name the address window as its install")
        try server.waitUntilIdle()
        XCTAssertEqual(try server.storedCount(), 5)
    }
}
