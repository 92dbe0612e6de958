// What users write about a crash reaches the people fixing it: the crash report dialog's
// `user_report` item and the feedback widget's `feedback` item are kept (they used to be skipped
// after a 200 that told the SDK they were accepted), listed by Sentry's user-feedback API and
// shown on the issue of the event they name.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class UserFeedbackTests: XCTestCase {
    func testBothFeedbackItemsAreKeptListedAndShownOnTheirIssue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let eventID = TestEvents.eventID()
        let event: JSONValue = [
            "event_id": .string(eventID), "platform": "python", "level": "error",
            "exception": ["values": [["type": "PaymentDeclined", "value": "card 4242 declined"]]]
        ]
        // The crash report dialog's answer, in the event's own envelope (sentry-python's capture_user_feedback).
        let report: JSONValue = ["event_id": .string(eventID), "name": "Ada", "email": "ada@example.com", "comments": "I only clicked <Pay>"]
        let r1 = server.sendEnvelope(TestEvents.envelope(event, extraItems: [Envelope.Item(type: "user_report", payload: report.serialized())]))
        XCTAssertEqual(r1.status, 200, r1.text)
        // The feedback widget's, later and on its own (sentry-javascript's captureFeedback).
        func widget(_ message: String, about: String?) -> Data {
            var feedback: JSONObject = ["message": .string(message), "contact_email": "bo@example.com", "name": "Bo", "url": "https://shop.example/checkout"]
            if let about { feedback["associated_event_id"] = .string(about) }
            let item: JSONValue = [
                "event_id": .string(TestEvents.eventID()), "type": "feedback", "platform": "javascript",
                "timestamp": .double(Date().timeIntervalSince1970), "contexts": ["feedback": .object(feedback)]
            ]
            return Envelope(header: ["event_id": item["event_id"] ?? .null], items: [Envelope.Item(type: "feedback", payload: item.serialized())]).serialized()
        }
        XCTAssertEqual(server.sendEnvelope(widget("The page froze after paying", about: eventID)).status, 200)
        XCTAssertEqual(server.sendEnvelope(widget("Love the new search", about: nil)).status, 200)
        try server.waitUntilIdle()

        let list = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/user-feedback/").arrayValue ?? []
        XCTAssertEqual(list.count, 3, "\(list)")
        XCTAssertEqual(list.map { $0["comments"]?.stringValue ?? "" }, ["Love the new search", "The page froze after paying", "I only clicked <Pay>"])
        let issueID = try XCTUnwrap(try server.getJSON("/api/0/projects/faultline/\(server.projectID)/events/\(eventID)/")["issue"]?.stringValue)
        XCTAssertEqual(list[2]["eventID"]?.stringValue, eventID)
        XCTAssertEqual(list[2]["email"]?.stringValue, "ada@example.com")
        XCTAssertEqual(list[2]["issue"]?["id"]?.stringValue, issueID)
        XCTAssertEqual(list[1]["issue"]?["id"]?.stringValue, issueID, "the widget's feedback names the same event")
        XCTAssertEqual(list[0]["issue"], .null, "feedback about no event belongs to no issue")

        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issueID)", login).text
        let section = try XCTUnwrap(page.range(of: "<h2>User feedback (2)</h2>"), "a section with both: \(page.prefix(3000))")
        let text = page[section.lowerBound...]
        XCTAssertTrue(text.contains("I only clicked &lt;Pay&gt;"), "escaped, as the user typed it")
        XCTAssertTrue(text.contains("The page froze after paying") && text.contains("https://shop.example/checkout"))
        XCTAssertFalse(page.contains("Love the new search"), "feedback about nothing is not on this issue")
    }
}
