// A device whose clock is off: its envelope's `sent_at` is as far from the arrival as its event's
// timestamp is from the truth, so the event's time is shifted by that drift (Relay's rule, past 55
// minutes); a report queued offline for a day keeps its own time (sent now, it happened then).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class ClockDriftTests: XCTestCase {
    func testAClockTwoDaysSlowIsCorrectedAndAQueuedReportKeepsItsTime() throws {
        let server = try TestServer()
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        func send(function: String, timestamp: Double, sentAt: Double) {
            var e = TestEvents.native(offsets: [0x10, 0x20], functions: ["main", function])
            e["timestamp"] = .double(timestamp)
            let body = TestEvents.envelope(e, header: ["sent_at": .string(SentryTimestamp.rfc3339(sentAt))])
            XCTAssertEqual(server.sendEnvelope(body).status, 200)
        }
        // Slow clock: it happened ten minutes before it was sent; both read two days early.
        send(function: "slowClock", timestamp: now - 2 * 86_400 - 600, sentAt: now - 2 * 86_400)
        // Queued offline: it happened a day ago, sent (with a right clock) now.
        send(function: "queued", timestamp: now - 86_400, sentAt: now)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").arrayValue ?? []
        func firstSeen(_ function: String) throws -> Double {
            try XCTUnwrap(issues.first { $0["title"]?.stringValue?.contains(function) == true }?["first_seen"]?.doubleValue, "\(issues)")
        }
        XCTAssertEqual(try firstSeen("slowClock"), now - 600, accuracy: 60, "shifted by the clock's drift")
        XCTAssertEqual(try firstSeen("queued"), now - 86_400, accuracy: 60, "its own time: the clock was right")
    }
}
