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

    /// A selection builds what it names at each level, applies to each element of a list, keeps a
    /// presence-only member as null, and validates everything it does not build.
    func testASelectionBuildsOnlyWhatItNamesAndStillValidatesTheRest() throws {
        let inner = JSONSelection(["registers": .skipped], othersWhole: true)
        let selection = JSONSelection(
            ["list": .selected(inner), "one": .selected(inner), "seen": .presenceOnly, "whole": .whole], othersWhole: false)
        let doc =
            #"{"list":[{"registers":{"rip":"0x1"},"frames":[1]},{"frames":[2]},7],"one":{"registers":[],"a":"b"},"#
            + #""seen":{"values":[1,2]},"whole":{"registers":1},"other":{"x":[1]}}"#
        let v = try JSONParser.parseObject(Data(doc.utf8), selecting: selection)
        XCTAssertEqual(v, ["list": [["frames": [1]], ["frames": [2]], 7], "one": ["a": "b"], "seen": .null, "whole": ["registers": 1]])
        XCTAssertEqual(
            try JSONParser.parseObject(Data(#"[{"registers":1,"k":2}]"#.utf8), selecting: inner), [["registers": 1, "k": 2]], "a list at the top is read whole")
        for bad in invalid where !bad.isEmpty {
            for member in ["list", "one", "seen", "other"] {
                let wrapped = #"{"\#(member)":{"registers":"# + bad + "}}"
                XCTAssertThrowsError(try JSONParser.parseObject(Data(wrapped.utf8), selecting: selection), wrapped)
            }
        }
        let deep = String(repeating: #"{"list":"#, count: 200) + "1" + String(repeating: "}", count: 200)
        let nested = JSONSelection(["list": .selected(JSONSelection(["list": .whole], othersWhole: false))], othersWhole: false)
        XCTAssertThrowsError(try JSONParser.parseObject(Data(deep.utf8), selecting: nested), "depth stays bounded")
    }

    /// A repeated key takes its rule each time (the later value wins, as without a selection), and
    /// lists nested in lists under a selection are bounded by the same depth.
    func testASelectionTakesRepeatedKeysAndDeepListsAsTheFullParseDoes() throws {
        let selection = JSONSelection(["k": .selected(JSONSelection(["r": .skipped], othersWhole: true)), "p": .presenceOnly], othersWhole: false)
        let v = try JSONParser.parseObject(Data(#"{"k":{"r":1,"a":1},"p":[1],"s":0,"k":{"a":2,"r":2},"p":{},"s":1}"#.utf8), selecting: selection)
        XCTAssertEqual(v, ["k": ["a": 2], "p": .null])
        let deepList = #"{"k":"# + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "}"
        XCTAssertThrowsError(try JSONParser.parseObject(Data(deepList.utf8), selecting: selection), "depth through selected lists")
        XCTAssertThrowsError(try JSONParser.parse(Data(deepList.utf8)))
        XCTAssertThrowsError(try JSONParser.parseObject(Data(#"{"p":{"x":[1,]}}"#.utf8), selecting: selection), "a presence-only member is validated")
        XCTAssertThrowsError(try JSONParser.parseObject(Data(#"{"k":{"r":{"x":tru}}}"#.utf8), selecting: selection), "a skipped member is validated")
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

    /// Strings are scanned eight bytes at a time: a quote, a backslash or a control character
    /// at every position of a word (and in the tail after the last whole word), beside multi-byte
    /// UTF-8, reads as it does byte by byte; Foundation decides what the string holds.
    func testStringStopsAtEveryPositionOfAWord() throws {
        for length in 0..<20 {
            for (inserted, valid) in [("\\\"", true), ("\\n", true), ("é", true), ("\u{7F}", true), ("\u{01}", false), ("\t", false)] {
                for at in 0...length {
                    var text = String(repeating: "a", count: length)
                    text.insert(contentsOf: inserted, at: text.index(text.startIndex, offsetBy: at))
                    let doc = Data(("{\"k\":\"" + text + "\",\"z\":1}").utf8)
                    guard valid else {
                        XCTAssertThrowsError(try JSONParser.parse(doc), text.debugDescription)
                        XCTAssertThrowsError(try JSONParser.parseObject(doc, keeping: ["z"]), text.debugDescription)
                        continue
                    }
                    let expected = try XCTUnwrap((try JSONSerialization.jsonObject(with: doc)) as? [String: Any])["k"] as? String
                    XCTAssertEqual(try JSONParser.parse(doc)["k"]?.stringValue, expected, text.debugDescription)
                    XCTAssertEqual(try JSONParser.parseObject(doc, keeping: ["z"])["z"], 1, "skipped: \(text.debugDescription)")
                }
            }
        }
    }

    /// Integers of up to 18 digits are read without a String; longer ones, and the limits of
    /// Int64, the slow way; past Int64 a number is a double. Skipped numbers are checked alike.
    func testIntegersAtTheEdgesOfTheFastPath() throws {
        let cases: [(String, JSONValue)] = [
            ("0", .int(0)), ("-0", .int(0)), ("7", .int(7)), ("-7", .int(-7)),
            ("999999999999999999", .int(999_999_999_999_999_999)), ("-999999999999999999", .int(-999_999_999_999_999_999)),
            ("1000000000000000000", .int(1_000_000_000_000_000_000)),
            ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)), ("12.5", .double(12.5)), ("1e2", .double(100))
        ]
        for (text, value) in cases {
            XCTAssertEqual(try JSONParser.parse(Data(("[" + text + "]").utf8))[0], value, text)
            XCTAssertEqual(try JSONParser.parseObject(Data(("{\"s\":" + text + ",\"k\":2}").utf8), keeping: ["k"])["k"], 2, text)
        }
        for bad in ["-", "01", "-01", "1.", "1e", "1e+", ".5", "+1"] {
            XCTAssertThrowsError(try JSONParser.parse(Data(("[" + bad + "]").utf8)), bad)
            XCTAssertThrowsError(try JSONParser.parseObject(Data(("{\"s\":" + bad + ",\"k\":2}").utf8), keeping: ["k"]), bad)
        }
    }

    /// A repeated key is the same key under String equality, which is canonical equivalence:
    /// `é` written precomposed and as `e` + U+0301 (different UTF-8 lengths) is one member that
    /// takes the later value, in a small object as in one large enough to be indexed.
    func testCanonicallyEquivalentKeysAreOneMember() throws {
        let small = try JSONParser.parse(Data(#"{"\u00e9":1,"e\u0301":2}"#.utf8))
        XCTAssertEqual(small.objectValue?.count, 1)
        XCTAssertEqual(small["\u{e9}"], 2)
        let filler = (0..<30).map { "\"k\($0)\":0," }.joined()
        let large = try JSONParser.parse(Data(("{" + filler + #""\u00e9":1,"e\u0301":2}"#).utf8))
        XCTAssertEqual(large.objectValue?.count, 31)
        XCTAssertEqual(large["e\u{301}"], 2)
        // ASCII keys are told apart by length before they are compared; an escaped or non-ASCII
        // key is still the same key as its ASCII equal (the Kelvin sign is canonically `K`).
        for (text, count, key, value) in [
            (#"{"K":1,"\u212A":2}"#, 1, "K", 2), (#"{"\u212A":1,"K":2}"#, 1, "K", 2), (#"{"a":1,"\u0061":2}"#, 1, "a", 2),
            (#"{"\u0061":1,"a":2}"#, 1, "a", 2), (#"{"ab":1,"cd":2,"ab":3}"#, 2, "ab", 3), (#"{"ab":1,"é":0,"ab":3}"#, 2, "ab", 3)
        ] as [(String, Int, String, JSONValue)] {
            let v = try JSONParser.parse(Data(text.utf8))
            XCTAssertEqual(v.objectValue?.count, count, text)
            XCTAssertEqual(v[key], value, text)
        }
        let selection = JSONSelection(["k": .selected(JSONSelection(["r": .skipped], othersWhole: true)), "K": .whole], othersWhole: false)
        XCTAssertEqual(try JSONParser.parseObject(Data(#"{"\u006b":{"r":1,"a":1},"\u212A":3,"x":0}"#.utf8), selecting: selection), ["k": ["a": 1], "K": 3])
        XCTAssertEqual(
            try JSONParser.parseObject(Data(#"{"kk":0,"k":{"r":1,"a":1},"K":2,"x":0,"k":{"a":4}}"#.utf8), selecting: selection), ["k": ["a": 4], "K": 2],
            "names found by length and bytes among keys of the same length")
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
