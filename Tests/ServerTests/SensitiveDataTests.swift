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
        e["threads"] = [
            "values": [["id": 1, "stacktrace": ["frames": [["function": "pay", "vars": ["value": "4111 1111 1111 1111"]]]]]]
        ]
        e["request"] = [
            "url": "https://shop.example/pay",
            "cookies": ["sessionid": "sess-value-one", "theme": "dark-theme", "cart": "4111111111111111"],
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
        for secret in ["sess-value-one", "csrf-value-two", "5555 5555", "123-45-6789", "6011-1111", "078-05-1120", "4111 1111"] {
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
        for secret in ["sess-value-one", "csrf-value-two", "5555 5555", "123-45-6789", "6011-1111", "078-05-1120", "4111 1111", "to ann@"] {
            XCTAssertFalse(page.contains(secret), secret)
        }
        XCTAssertTrue(text.contains("\"cart\":\"[Filtered]\""), "a cookie's value is scrubbed as any value: \(text)")
        // A message event's title: named as in its event.
        let message: JSONValue = [
            "event_id": .string(TestEvents.eventID()), "level": "info", "platform": "other",
            "timestamp": .double(Date().timeIntervalSince1970), "message": "paid 4111 1111 1111 1111 for bob@example.com"
        ]
        server.ingest(message)
        try server.waitUntilIdle()
        let titles = try server.getJSON("/api/0/projects/faultline/default/issues/").jsonString
        XCTAssertTrue(titles.contains("paid [creditcard] for [email]"), titles)
        XCTAssertFalse(titles.contains("4111 1111"), titles)
    }

    /// Cookies sent as pairs or as the header's text; an exception's own `value` left as sent,
    /// but not every `value` below it; Relay's order of the rules, each over what the one before left.
    func testCookieFormsExceptionValuesAndTheRulesOrder() {
        let event: JSONValue = [
            "request": [
                "cookies": [["PHPSESSID", "php-session-1"], ["lang", "de"], ["cart", "4111111111111111"]],
                "headers": ["Cookie": "xsrf-token=x-token-2; lang=de", "user-agent": "UA 4111111111111111"]
            ],
            "exception": [
                "values": [
                    [
                        "type": "E", "value": "kept 4111111111111111",
                        "mechanism": ["data": ["value": "gone 4111111111111111"]],
                        "stacktrace": ["frames": [["vars": ["value": "gone 4111111111111111"]]]]
                    ]
                ]
            ]
        ]
        let text = SensitiveData.scrubbed(event).jsonString
        for gone in ["php-session-1", "x-token-2", "gone 4111"] { XCTAssertFalse(text.contains(gone), "\(gone): \(text)") }
        for kept in ["\"lang\",\"de\"", "kept 4111111111111111", "UA 4111111111111111", "lang=de"] {
            XCTAssertTrue(text.contains(kept), "\(kept): \(text)")
        }
        XCTAssertTrue(text.contains("\"cart\",\"[Filtered]\""), text)
        XCTAssertEqual(
            SensitiveData.scrubbed(["request": ["cookies": "sessionid=s3; n=4111111111111111"]])["request"]?["cookies"]?.stringValue,
            "sessionid=[Filtered]; n=[Filtered]")
        // Cards before SSNs over the whole text: the SSN-shaped start does not hide the card after it.
        XCTAssertEqual(SensitiveData.scrubbedValue("123-45-6011 1111 1111 1111"), "123-45-[Filtered]")
        // Emails before numbers in a message.
        XCTAssertEqual(SensitiveData.scrubbedMessage("user+123-45-6789@corp.com"), "[email]")
        XCTAssertEqual(SensitiveData.scrubbedMessage("4111111111111111@x.com"), "[email]")
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
        XCTAssertEqual(SensitiveCookies.headerScrubbed("a=1; PHPSESSID=x; b"), "a=1; PHPSESSID=[Filtered]; b")
        XCTAssertEqual(SensitiveCookies.headerScrubbed("auth_token=t; c=3"), "auth_token=[Filtered]; c=3")
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

    /// Random text made of the pieces the matchers look at (ASCII: the oracle's character classes
    /// then agree with Relay's), against Relay's regexes run one after another by
    /// NSRegularExpression; and text with non-ASCII pieces through the matchers, which must not trap.
    func testTheMatchersAgreeWithRelaysRegexesOnRandomText() throws {
        let card = try NSRegularExpression(pattern: #"\b((?:3[47]\d|4\d{3}|5[1-5]\d\d|65\d\d|6011)([-\s]?\d){12})\b"#)
        let iban = try NSRegularExpression(pattern: #"\b(DE|GB|FR|NL)\d{2}[a-zA-Z0-9]{11,29}\b"#)
        let ssn = try NSRegularExpression(pattern: #"\b([0-9]{3}-[0-9]{2}-[0-9]{4})\b"#)
        let email = try NSRegularExpression(
            pattern: #"\b[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}\b"#)
        func oracle(_ s: String, _ rules: [(NSRegularExpression, String)]) -> String {
            rules.reduce(s) { text, rule in
                rule.0.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: rule.1)
            }
        }
        var seed: UInt64 = 35
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        let ascii = [
            "4", "1", "0", "5", "6011", "37", "-", " ", "\t", "DE", "GB", "89", "a", "Z", "_", "@", ".", "com", "x@y.io", "123-45-6789",
            "0000", "+", "e"
        ]
        for round in 0..<4_000 {
            let text = (0..<(next() % 24)).map { _ in ascii[next() % ascii.count] }.joined()
            let values = SensitiveNumbers.replaced(in: text, card: "[c]", iban: "[i]", ssn: "[s]") ?? text
            XCTAssertEqual(values, oracle(text, [(card, "[c]"), (iban, "[i]"), (ssn, "[s]")]), "round \(round): \(text.debugDescription)")
            let named = EmailAddresses.replaced(in: text, with: "[e]") ?? text
            XCTAssertEqual(named, oracle(text, [(email, "[e]")]), "round \(round): \(text.debugDescription)")
            if values != oracle(text, [(card, "[c]"), (iban, "[i]"), (ssn, "[s]")]) { return }
        }
        let unicode = ascii + ["é", "№", "\u{A0}", "４", "¹", "\u{301}", "＿"]
        for _ in 0..<4_000 {
            let text = (0..<(next() % 24)).map { _ in unicode[next() % unicode.count] }.joined()
            for out in [SensitiveNumbers.replaced(in: text, card: "[c]", iban: "[i]", ssn: "[s]"), EmailAddresses.replaced(in: text, with: "[e]")] {
                if let out { XCTAssertNotEqual(out, text, "a change is reported only when there is one") }
            }
        }
        // Relay's \d and \b: another script's digits are digits, a superscript is no part of a word.
        XCTAssertEqual(SensitiveNumbers.replaced(in: "４１１１１１１１１１１１１１１１", card: "[c]", iban: "[i]", ssn: "[s]"), "[c]")
        XCTAssertEqual(SensitiveNumbers.replaced(in: "4111 1111 1111 1111¹", card: "[c]", iban: "[i]", ssn: "[s]"), "[c]¹")
    }

    /// A text of many dots and `@`s (a hostile message) is read in time linear in its length.
    func testAHostileMessageIsReadInLinearTime() {
        let text = String(repeating: "a.", count: 50_000) + "@" + String(repeating: "b.", count: 50_000) + "@x"
        XCTAssertNil(EmailAddresses.replaced(in: text, with: "[e]"))
        XCTAssertEqual(EmailAddresses.replaced(in: String(repeating: "a@b.cc ", count: 20_000), with: "e")?.count, 40_000)
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
