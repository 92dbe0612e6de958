// The one JSON reader agrees with Foundation on what is valid, skipping members does not weaken
// validation, and the one writer's number format round-trips.
import Foundation
import XCTest
import FaultlineProtocol

final class JSONParserTests: XCTestCase {
    let valid = [
        #"{}"#, #"[]"#, #"{"a":[1,-2,3.5e3,true,false,null,"x\u00e9\n\"\\"]}"#, #" {"a" : {"b":{}} } "#, #""str""#, "0", "-0.5",
        #"{"k":"\ud83d\ude00"}"#, #"[1E5, 2e-3]"#
    ]
    let invalid = [
        #"{"#, #"{"a":}"#, #"{"a":1,}"#, #"[1,]"#, #"01"#, #"{"a":tru}"#, #"{"a":"\x"}"#, "{\"a\":\"\u{01}\"}", #"{} x"#,
        #"{"a":"\u12"}"#, #"[1.]"#, #"{'a':1}"#, #"nul"#, #""unterminated"#, ""
    ]

    func testAgreesWithFoundationOnValidity() {
        for doc in valid {
            XCTAssertNoThrow(try JSONParser.parse(Data(doc.utf8)), doc)
            XCTAssertNoThrow(try JSONParser.parseObject(Data(doc.utf8), keeping: []), doc)
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(doc.utf8), options: [.fragmentsAllowed]), doc)
        }
        for doc in invalid {
            XCTAssertThrowsError(try JSONParser.parse(Data(doc.utf8)), doc)
            XCTAssertThrowsError(try JSONParser.parseObject(Data(doc.utf8), keeping: []), doc)
            // Also inside a member that is skipped rather than built.
            XCTAssertThrowsError(try JSONParser.parseObject(Data((#"{"skipped":"# + doc + "}").utf8), keeping: ["other"]), doc)
        }
    }

    func testValuesAndRoundTrip() throws {
        let v = try JSONParser.parse(Data(#"{"b":[1,2.5,"\u00e9\ud83d\ude00"],"a":{"x":null,"y":true},"n":-9007199254740993}"#.utf8))
        XCTAssertEqual(v["b"], [1, 2.5, "é😀"])
        XCTAssertEqual(v["n"], .int(-9007199254740993))
        XCTAssertEqual(
            String(decoding: v.serialized(), as: UTF8.self),
            #"{"a":{"x":null,"y":true},"b":[1,2.5,"é😀"],"n":-9007199254740993}"#)
        XCTAssertEqual(
            try JSONParser.parse((["s": "quote\" back\\ nl\n tab\t ctl\u{01}"] as JSONValue).serialized()), ["s": "quote\" back\\ nl\n tab\t ctl\u{01}"])
    }

    func testSelectiveParseKeepsOnlyNamedMembers() throws {
        let v = try JSONParser.parseObject(Data(#"{"keep":{"a":1},"drop":[{"deep":[1,2,{"x":"y"}]}],"also":2}"#.utf8), keeping: ["keep", "also"])
        XCTAssertEqual(v, ["keep": ["a": 1], "also": 2])
    }

    func testNestingIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        XCTAssertThrowsError(try JSONParser.parse(Data(deep.utf8)))
        XCTAssertThrowsError(try JSONParser.parseObject(Data((#"{"x":"# + deep + "}").utf8), keeping: []))
    }

    func testOneNumberFormatRoundTrips() throws {
        let v: JSONValue = ["whole": .double(1), "neg": .double(-3), "frac": 0.1, "big": .double(1e20), "int": 1, "nan": .double(.nan)]
        XCTAssertEqual(
            String(decoding: v.serialized(), as: UTF8.self),
            #"{"big":1e+20,"frac":0.1,"int":1,"nan":null,"neg":-3.0,"whole":1.0}"#)
        var w = JSONWriter()
        w.double(1); w.comma(); w.int(-42); w.comma(); w.int64(.min)
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), "1.0,-42,-9223372036854775808")
        let parsed = try JSONValue.parse(v.serialized())
        XCTAssertEqual(parsed["whole"], .double(1), "a whole double reads back as a double")
        XCTAssertEqual(parsed["int"], .int(1))
        XCTAssertEqual(parsed.serialized(), v.serialized())
    }

    func testPrettyOutput() {
        let v: JSONValue = ["a": [1, 2], "b": [:], "c": []]
        XCTAssertEqual(
            String(decoding: v.serialized(pretty: true), as: UTF8.self),
            """
            {
              "a" : [
                1,
                2
              ],
              "b" : {},
              "c" : []
            }
            """)
    }
}
