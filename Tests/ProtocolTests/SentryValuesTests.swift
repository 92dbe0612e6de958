// The three forms Sentry reads a list container in, and the legacy interface names, turned into
// the protocol's form; an event already in it is left alone (nil: nothing to rewrite).
import XCTest
import FaultlineProtocol

final class SentryValuesTests: XCTestCase {
    func testEveryFormBecomesValues() throws {
        let exception: JSONValue = ["type": "E", "value": "v"]
        let event: JSONValue = [
            "exception": [exception], "threads": ["id": 1, "crashed": true], "breadcrumbs": .null, "message": "kept"
        ]
        let n = try XCTUnwrap(SentryValues.normalised(event))
        XCTAssertEqual(n["exception"], ["values": [exception]])
        XCTAssertEqual(n["threads"], ["values": [["id": 1, "crashed": true]]])
        XCTAssertNil(n["breadcrumbs"], "a null container is dropped")
        XCTAssertEqual(n["message"], "kept")
        XCTAssertNil(SentryValues.normalised(n), "normal form is a fixed point")
        XCTAssertNil(SentryValues.normalised(["exception": ["values": [exception]], "threads": ["values": []]]))
        XCTAssertNil(SentryValues.normalised(["exception": ["values": .null]]), "values present: the protocol's form")
    }

    func testLegacyNamesAreReadUnderTheirModernOnesUnlessBothAreSent() throws {
        let legacy: JSONValue = ["sentry.interfaces.Exception": [["type": "Old"]], "sentry.interfaces.Message": ["message": "m"]]
        let n = try XCTUnwrap(SentryValues.normalised(legacy))
        XCTAssertEqual(n["exception"], ["values": [["type": "Old"]]], "renamed, then normalised")
        XCTAssertEqual(n["logentry"], ["message": "m"])
        XCTAssertNil(n["sentry.interfaces.Exception"])
        let both: JSONValue = ["exception": ["values": [["type": "New"]]], "sentry.interfaces.Exception": ["values": [["type": "Old"]]]]
        XCTAssertEqual(try XCTUnwrap(SentryValues.normalised(both))["exception"], ["values": [["type": "New"]]])
    }

    func testBytesAreRewrittenOnlyWhenNeeded() throws {
        let normal = Data(#"{"exception":{"values":[{"type":"E"}]},"extra":{"a":1}}"#.utf8)
        XCTAssertNil(try SentryValues.normalised(normal, parsed: try JSONParser.parse(normal)))
        let go = Data(#"{"exception":[{"type":"E"}],"extra":{"a":1}}"#.utf8)
        // What a reader that built only some members passes: the rewrite reads the bytes in full.
        let partial = try JSONParser.parseObject(go, keeping: SentryValues.keysToCheck)
        let (tree, bytes) = try XCTUnwrap(try SentryValues.normalised(go, parsed: partial))
        XCTAssertEqual(tree["extra"], ["a": 1])
        XCTAssertEqual(try JSONParser.parse(bytes), tree)
    }
}
