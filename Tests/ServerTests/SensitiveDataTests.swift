// Secrets an SDK sends unasked are never shown: sentry-cli's `send-event` puts the process
// environment in `extra.environ` (its SENTRY_AUTH_TOKEN was on the issue page and in the event
// API in full); web frameworks send the Authorization header. Sentry's default scrubbing rules:
// values under keys that name a secret, `Bearer` credentials, private keys, URL passwords.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class SensitiveDataTests: XCTestCase {
    func testSentryCLIsEnvironmentDoesNotShowTheTokenOnThePageOrInTheAPI() throws {
        guard let cli = ThirdParty.executable("sentry-cli") else {
            return XCTFail("sentry-cli is not installed (tools/setup runs pip install sentry-cli)")
        }
        let server = try TestServer()
        defer { server.stop() }
        let secret = "flst_" + String(repeating: "7", count: 40)
        let r = try TestSupport.run(
            cli, ["send-event", "-m", "deploy step failed"],
            environment: [
                "SENTRY_DSN": server.dsn, "SENTRY_AUTH_TOKEN": secret, "DATABASE_PASSWORD": "hunter2-hunter2",
                "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "1"
            ], timeout: 60)
        XCTAssertEqual(r.exitCode, 0, r.description)
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue.id)", login).text
        XCTAssertTrue(page.contains("SENTRY_AUTH_TOKEN"), "the environment is shown, its secrets filtered")
        XCTAssertFalse(page.contains(secret), "the token is not on the page")
        XCTAssertFalse(page.contains("hunter2-hunter2"))
        XCTAssertTrue(page.contains("[Filtered]"))
        let occurrence = try XCTUnwrap(try server.server.stores.issueReads.occurrences(issueID: issue.id, limit: 1, offset: 0).first)
        let api = server.get("/api/0/projects/faultline/default/events/\(occurrence.eventID)/").text
        XCTAssertTrue(api.contains("SENTRY_AUTH_TOKEN"), api)
        XCTAssertFalse(api.contains(secret), "the token is not in the event API")
    }

    func testTheDefaultRulesFilterKeysCredentialsKeysAndURLPasswords() throws {
        let server = try TestServer()
        defer { server.stop() }
        var e = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
        e["extra"] = ["db_password": "pw-one-1234", "nested": ["api_key": ["k": "pw-two-1234"]], "harmless": "visible-value"]
        e["request"] = [
            "url": "https://shop.example/pay", "headers": [["Authorization", "Basic pw-three-1234"], ["Accept", "text/html"]]
        ]
        e["breadcrumbs"] = [
            "values": [
                ["message": "called https://admin:pw-four-1234@db.example:5432/x with Bearer pw-five-1234"],
                ["message": "-----BEGIN RSA PRIVATE KEY-----\npw-six-1234\n-----END RSA PRIVATE KEY-----"]
            ]
        ]
        e["tags"] = ["api_token": "pw-seven-1234", "shard": "eu-1"]
        server.ingest(e)
        try server.waitUntilIdle()
        let issue = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(issue.id)", login).text
        for secret in ["pw-one", "pw-two", "pw-three", "pw-four", "pw-five", "pw-six", "pw-seven"] {
            XCTAssertFalse(page.contains(secret), "\(secret) is filtered")
        }
        for shown in ["visible-value", "text/html", "https://admin:[Filtered]@db.example:5432/x", "Bearer [Filtered]", "eu-1"] {
            XCTAssertTrue(page.contains(HTML.esc(shown)), "\(shown) is shown")
        }
        let tagged = server.get("/api/0/projects/faultline/default/issues/?query=api_token:pw-seven-1234").json?.arrayValue ?? []
        XCTAssertTrue(tagged.isEmpty, "a secret tag's value is not stored for search")
    }

    /// Titles, logs and the event's lists: credentials are filtered where they are derived and
    /// stored apart from the event too, and two strings in a list that is no pair list stay.
    func testTitlesLogsAndListsAreFilteredWhereTheyAreShown() throws {
        let server = try TestServer()
        defer { server.stop() }
        var e = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
        e["exception"] = [
            "values": [
                [
                    "type": "HTTPError", "value": "401 for url: https://svc:pw-title-1234@api.example/v1",
                    "stacktrace": e["exception"]?["values"]?[0]?["stacktrace"] ?? .null
                ]
            ]
        ]
        e["extra"] = ["lines": ["token = read below", "the second line stays"]]
        server.ingest(e)
        let log: JSONValue = [
            "items": [
                [
                    "timestamp": .double(Date().timeIntervalSince1970), "level": "info",
                    "body": "retrying with Bearer pw-log-1234 for card 4111 1111 1111 1111",
                    "attributes": [
                        "api_key": ["value": "pw-attr-1234", "type": "string"], "shard": ["value": "eu-1", "type": "string"],
                        "payer": ["value": "ssn 078-05-1120", "type": "string"]
                    ]
                ]
            ]
        ]
        XCTAssertEqual(server.sendEnvelope(Envelope(header: [:], items: [Envelope.Item(type: "log", payload: log.serialized())]).serialized()).status, 200)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/default/issues/").jsonString
        XCTAssertFalse(issues.contains("pw-title"), issues)
        XCTAssertTrue(issues.contains("svc:[Filtered]@api.example"), issues)
        let login = try XCTUnwrap(server.webLogin())
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        let page = server.page("/ui/issues/\(id)", login).text
        XCTAssertTrue(page.contains("the second line stays"), "two strings in a list that is no pair list")
        let logs = server.page("/ui/projects/default/logs", login).text + server.get("/api/0/projects/faultline/default/logs/").text
        for secret in ["pw-log", "pw-attr", "4111 1111", "078-05-1120"] { XCTAssertFalse(logs.contains(secret), secret) }
        XCTAssertTrue(logs.contains("eu-1"))
        XCTAssertTrue(logs.contains("for card [creditcard]"), "a log line's body names the number, as a message does")
        XCTAssertTrue(logs.contains("ssn [Filtered]"), "an attribute filters it")
    }

    /// Relay's defaults beyond keys: session and CSRF cookies in `request.cookies` (object, pairs
    /// or text) and in a Cookie header; card numbers and SSNs in any string, named in the message,
    /// left in an exception's value, a frame's path and the User-Agent, as Relay leaves them.
    func testCookiesCardNumbersAndSSNsAreFilteredWhereRelayFiltersThem() throws {
        let server = try TestServer()
        defer { server.stop() }
        var e = TestEvents.native(offsets: [0x100], functions: ["alpha_crash"])
        e["exception"] = [
            "values": [
                [
                    "type": "PaymentError", "value": "card 4111111111111111 declined",
                    "stacktrace": e["exception"]?["values"]?[0]?["stacktrace"] ?? .null
                ]
            ]
        ]
        e["logentry"] = ["formatted": "charging 5555 5555 5555 4444 for 123-45-6789, receipt to ann@example.org"]
        e["extra"] = [
            "card": "paid with 6011-1111-1111-1117 today", "ssn": "078-05-1120", "stamp": "1453843029218310",
            "iban": "from DE89370400440532013000", "contact": "ann@example.org"
        ]
        e["request"] = [
            "url": "https://shop.example/pay",
            "cookies": ["sessionid": "sess-value-one", "theme": "dark-theme"],
            "headers": [
                ["Cookie", "csrf_token=csrf-value-two; lang=en-gb"], ["User-Agent", "Agent/4111111111111111"], ["Accept", "text/html"]
            ]
        ]
        server.ingest(e)
        try server.waitUntilIdle()
        let occurrence = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first)
        let event = try XCTUnwrap(try server.server.stores.issueReads.occurrences(issueID: occurrence.id, limit: 1, offset: 0).first)
        let api = try XCTUnwrap(server.get("/api/0/projects/faultline/default/events/\(event.eventID)/").json)
        let text = api.jsonString
        for secret in ["sess-value-one", "csrf-value-two", "5555 5555", "123-45-6789", "6011-1111", "078-05-1120"] {
            XCTAssertFalse(text.contains(secret), "\(secret) is filtered: \(text)")
        }
        XCTAssertTrue(text.contains("paid with [Filtered] today"), text)
        XCTAssertTrue(text.contains("1453843029218310"), "no vendor prefix: a timestamp")
        XCTAssertTrue(text.contains("charging [creditcard] for [us-ssn], receipt to [email]"), text)
        XCTAssertTrue(text.contains("from [Filtered]"), text)
        XCTAssertTrue(text.contains("\"contact\":\"ann@example.org\""), "an address outside the message stays, as in Relay: \(text)")
        XCTAssertTrue(text.contains("card 4111111111111111 declined"), "an exception's value is left as sent")
        XCTAssertTrue(text.contains("Agent/4111111111111111"), "the User-Agent is left as sent")
        XCTAssertTrue(text.contains("csrf_token=[Filtered]; lang=en-gb"), text)
        XCTAssertTrue(text.contains("dark-theme"), text)
        let login = try XCTUnwrap(server.webLogin())
        let page = server.page("/ui/issues/\(occurrence.id)", login).text
        for secret in ["sess-value-one", "csrf-value-two", "6011-1111", "078-05-1120"] { XCTAssertFalse(page.contains(secret), secret) }
    }

    /// Relay's own examples for its card rule, and where a number stands alone.
    func testCardNumbersAndSSNsAsRelayReadsThem() {
        func filtered(_ s: String) -> String { SensitiveNumbers.replaced(in: s, card: "[card]", iban: "[iban]", ssn: "[ssn]") ?? s }
        for card in ["4571234567890111", "378282246310005", "6011111111111117", "4111111111111111", "5555555555554444"] {
            XCTAssertEqual(filtered(card), "[card]", card)
        }
        XCTAssertEqual(filtered("'4571234567890111'"), "'[card]'")
        XCTAssertEqual(filtered("foo 4571234567890111"), "foo [card]")
        XCTAssertEqual(filtered("4111 1111 1111 1111 and 4111-1111-1111-1111"), "[card] and [card]")
        XCTAssertEqual(filtered("№4111111111111111"), "№[card]", "a symbol is no part of a word")
        for kept in [
            "1453843029218310", "41111111111111112", "x4111111111111111", "4111111111111111_", "é4111111111111111", "4111 1111 1111 111",
            "4111--1111-1111-1111", "3411-1111-1111-11", "1234-45-6789", "a123-45-6789", "123-45-67890", "123 45 6789"
        ] {
            XCTAssertEqual(filtered(kept), kept, kept)
        }
        XCTAssertEqual(filtered("order 123-45-6789."), "order [ssn].")
        XCTAssertEqual(filtered("341-11-1111"), "[ssn]", "an Amex prefix that is no card is still an SSN")
        XCTAssertEqual(filtered("3411-1111-1111-111"), "[card]", "Amex: 15 digits")
        XCTAssertEqual(filtered("IBAN DE89370400440532013000, GB82WEST12345698765432."), "IBAN [iban], [iban].")
        for kept in ["XX89370400440532013000", "xDE89370400440532013000", "DE8937040044", "DE89370400440532013000_", "de89370400440532013000"] {
            XCTAssertEqual(filtered(kept), kept, kept)
        }
        XCTAssertEqual(SensitiveData.cookieHeaderScrubbed("a=1; PHPSESSID=x; b"), "a=1; PHPSESSID=[Filtered]; b")
        XCTAssertEqual(SensitiveData.cookieHeaderScrubbed("auth_token=t; c=3"), "auth_token=[Filtered]; c=3")
    }

    /// Relay's email rule, which it applies to messages and log bodies only.
    func testEmailAddressesAsRelayReadsThem() {
        func named(_ s: String) -> String { EmailAddresses.replaced(in: s, with: "[email]") ?? s }
        XCTAssertEqual(named("user bob@example.com logged in"), "user [email] logged in")
        XCTAssertEqual(named("to a.b+c@sub.example.co.uk. and x-y@h-1.io"), "to [email]. and [email]")
        XCTAssertEqual(named("..b@x.com"), "..[email]")
        for kept in ["x@y", "bob@example.c", "bob@example.com1", "bob@exa_mple.com", "@example.com", "no address"] {
            XCTAssertEqual(named(kept), kept, kept)
        }
        XCTAssertEqual(SensitiveData.scrubbedMessage("mail bob@example.com"), "mail [email]")
        XCTAssertEqual(SensitiveData.scrubbedValue("mail bob@example.com"), "mail bob@example.com", "not in other values, as in Relay")
    }

    /// Text made of the pieces the matchers look at (digits, separators, capitals, `@`, dots,
    /// non-ASCII letters, at the ends too): no trap, and text left alone is reported unchanged.
    func testRandomTextNeverTrapsTheMatchers() {
        var rng = SystemRandomNumberGenerator()
        let pieces = [
            "4", "1", "0", "5", "6011", "37", "-", " ", "\t", "DE", "GB", "89", "a", "Z", "_", "@", ".", "com", "é", "№", "\u{A0}", "x@y.io",
            "123-45-6789"
        ]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...24, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            for out in [
                SensitiveNumbers.replaced(in: text, card: "[c]", iban: "[i]", ssn: "[s]"), EmailAddresses.replaced(in: text, with: "[e]")
            ] {
                if let out { XCTAssertNotEqual(out, text, "a change is reported only when there is one") }
            }
        }
    }

    func testTheRulesAsFunctions() {
        XCTAssertTrue(SensitiveData.isSensitive(key: "X-Auth-Header"))
        XCTAssertTrue(SensitiveData.isSensitive(key: "GITHUB_TOKEN"))
        XCTAssertFalse(SensitiveData.isSensitive(key: "shard"))
        XCTAssertEqual(SensitiveData.scrubbedString("postgres://u:p4ss@h/db and ftp://a:b@c"), "postgres://u:[Filtered]@h/db and ftp://a:[Filtered]@c")
        XCTAssertNil(SensitiveData.scrubbedString("http://public@example.com/1"), "a DSN's key is a user, not a password")
        XCTAssertEqual(SensitiveData.scrubbedString("Authorization: Bearer abc.def, next"), "Authorization: Bearer [Filtered], next")
        XCTAssertNil(SensitiveData.scrubbedString("a plain message about passwords"), "words in a message stay")
    }
}
