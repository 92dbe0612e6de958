// A rule's filters count for its frequency trigger too, and what a client wrote reaches a mail or
// a Slack message only as text: no control character (a line of its own, a bare CR ending the
// mail early at a lenient relay), and never past Slack's limit for a section.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

extension AlertTests {
    /// `frequency:3/5` on a rule for `staging` counts staging's events only.
    func testAFrequencyRuleCountsOnlyTheEventsItsFiltersMatch() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(
            server, ["channel": "webhook", "target": .string("http://127.0.0.1:\(hook.port)/"), "on": "frequency:3/5", "environment": "staging"])
        func send(_ environment: String, count: Int) {
            for _ in 0..<count {
                var event = TestEvents.native(offsets: [0x10, 0x20], functions: ["main", "perEnvironment"])
                event["environment"] = .string(environment)
                XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
            }
        }
        send("production", count: 5)
        send("staging", count: 1)
        try round(server)
        XCTAssertEqual(webhookKinds(), [], "one staging event, whatever production sent")
        send("staging", count: 2)
        try round(server)
        XCTAssertEqual(webhookKinds(), ["frequency"])
        XCTAssertEqual(try JSONValue.parse(try XCTUnwrap(hook.requests.last).body)["frequency"]?["seen"]?.int64Value, 3)
    }

    /// A release with CR, LF and a dot line (what SMTP smuggling needs) is not a release at all
    /// (Sentry's rule): the regression mail goes out with no such line, and the message builders
    /// keep any control character out of every line they are given.
    func testAClientsControlCharactersNeverReachAMailOrSlackAsLines() throws {
        let server = try makeServer()
        defer { server.stop() }
        _ = try addRule(server, ["channel": "email", "target": "oncall@example.com", "on": "regression"])
        let hostile = "r4\r.\nRCPT TO:<x@evil.example>"
        send(server, count: 1, release: hostile, function: "smuggled")
        try round(server)
        let id = try onlyIssue(server)
        XCTAssertEqual(try server.getJSON("/api/0/issues/\(id)/")["releases"], [], "not a release")
        XCTAssertEqual(put(server, issue: id, ["status": "resolved"]).status, 200)
        send(server, count: 1, release: hostile, function: "smuggled")
        try round(server)
        let mail = try XCTUnwrap(smtp.messages.last)
        XCTAssertTrue(mail.contains("Subject: [Faultline] Regression"), mail)
        XCTAssertFalse(mail.replacingOccurrences(of: "\r\n", with: "").contains("\r"), "no bare CR: \(mail.debugDescription)")
        XCTAssertFalse(mail.contains("RCPT TO"), mail)

        // The builders themselves, given a release and a title full of control characters.
        let payload: JSONValue = [
            "kind": "regression",
            "issue": ["short_id": "DEFAULT-1", "title": "boom\r\n.\r\nBcc: victim@example.com", "release": .string(hostile), "culprit": "x\u{0}y"]
        ]
        let built = String(decoding: AlertMessage.email(payload, from: "a@example.com", to: "b@example.com", now: 0, messageID: "m@x"), as: UTF8.self)
        let body = built.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        for line in body.components(separatedBy: "\r\n") {
            XCTAssertFalse(line.unicodeScalars.contains { $0.properties.generalCategory == .control }, line.debugDescription)
            XCTAssertNotEqual(line, ".")
            XCTAssertFalse(line.hasPrefix("Bcc:"), line)
        }
        let slack = AlertMessage.slack(payload)
        XCTAssertFalse(slack["text"]?.stringValue?.unicodeScalars.contains { $0.properties.generalCategory == .control } ?? true)
    }

    /// Slack refuses a message whose section text passes 3,000 characters, and escaping makes
    /// `<` four: C++ frames full of templates must still fit.
    func testASlackMessageOfTemplateHeavyFramesStaysWithinSlacksLimit() throws {
        let frame = "std::vector<std::map<std::string, std::shared_ptr<Widget<int>>>>::emplace_back<std::pair<const std::string, Widget<int>>>()"
        let payload: JSONValue = [
            "kind": "new_issue",
            "issue": [
                "short_id": "DEFAULT-7", "title": .string(String(repeating: "<&>", count: 200)), "culprit": .string(frame),
                "top_frames": .array(Array(repeating: .string(frame + frame + frame), count: 5))
            ]
        ]
        let slack = AlertMessage.slack(payload)
        let sections = (slack["blocks"]?.arrayValue ?? []).compactMap { $0["text"]?["text"]?.stringValue }
        XCTAssertEqual(sections.count, 2)
        for text in sections {
            XCTAssertLessThanOrEqual(text.count, AlertMessage.slackSectionLimit)
            XCTAssertFalse(text.contains("<"), "escaped: \(text.prefix(80))")
            // Never cut inside an escape: every `&` begins a whole entity.
            for part in text.components(separatedBy: "&").dropFirst() {
                XCTAssertTrue(part.hasPrefix("lt;") || part.hasPrefix("gt;") || part.hasPrefix("amp;"), part.prefix(8).debugDescription)
            }
        }
        XCTAssertTrue(sections[1].hasSuffix("…```"), "says it was cut")
    }
}
