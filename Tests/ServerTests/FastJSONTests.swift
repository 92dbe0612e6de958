// The ingest JSON parser agrees with Foundation on what is valid, and skipping members does not
// weaken validation.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol

final class FastJSONTests: XCTestCase {
    let valid = [#"{}"#, #"[]"#, #"{"a":[1,-2,3.5e3,true,false,null,"x\u00e9\n\"\\"]}"#, #" {"a" : {"b":{}} } "#, #""str""#, "0", "-0.5",
                 #"{"k":"\ud83d\ude00"}"#, #"[1E5, 2e-3]"#]
    let invalid = [#"{"#, #"{"a":}"#, #"{"a":1,}"#, #"[1,]"#, #"01"#, #"{"a":tru}"#, #"{"a":"\x"}"#, "{\"a\":\"\u{01}\"}", #"{} x"#,
                   #"{"a":"\u12"}"#, #"[1.]"#, #"{'a':1}"#, #"nul"#, #""unterminated"#, ""]

    func testAgreesWithFoundationOnValidity() {
        for doc in valid {
            XCTAssertNoThrow(try FastJSON.parse(Data(doc.utf8)), doc)
            XCTAssertNoThrow(try FastJSON.parseObject(Data(doc.utf8), keeping: []), doc)
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(doc.utf8), options: [.fragmentsAllowed]), doc)
        }
        for doc in invalid {
            XCTAssertThrowsError(try FastJSON.parse(Data(doc.utf8)), doc)
            XCTAssertThrowsError(try FastJSON.parseObject(Data(doc.utf8), keeping: []), doc)
            // Also inside a member that is skipped rather than built.
            XCTAssertThrowsError(try FastJSON.parseObject(Data((#"{"skipped":"# + doc + "}").utf8), keeping: ["other"]), doc)
        }
    }

    func testValuesAndRoundTrip() throws {
        let v = try FastJSON.parse(Data(#"{"b":[1,2.5,"\u00e9\ud83d\ude00"],"a":{"x":null,"y":true},"n":-9007199254740993}"#.utf8))
        XCTAssertEqual(v["b"], [1, 2.5, "é😀"])
        XCTAssertEqual(v["n"], .int(-9007199254740993))
        XCTAssertEqual(String(decoding: FastJSON.serialize(v), as: UTF8.self),
                       #"{"a":{"x":null,"y":true},"b":[1,2.5,"é😀"],"n":-9007199254740993}"#)
        XCTAssertEqual(try FastJSON.parse(FastJSON.serialize(["s": "quote\" back\\ nl\n tab\t ctl\u{01}"])), ["s": "quote\" back\\ nl\n tab\t ctl\u{01}"])
    }

    func testSelectiveParseKeepsOnlyNamedMembers() throws {
        let v = try FastJSON.parseObject(Data(#"{"keep":{"a":1},"drop":[{"deep":[1,2,{"x":"y"}]}],"also":2}"#.utf8), keeping: ["keep", "also"])
        XCTAssertEqual(v, ["keep": ["a": 1], "also": 2])
    }

    func testNestingIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        XCTAssertThrowsError(try FastJSON.parse(Data(deep.utf8)))
        XCTAssertThrowsError(try FastJSON.parseObject(Data((#"{"x":"# + deep + "}").utf8), keeping: []))
    }
}
