// JSONObject reads like the Dictionary it replaced: one value per key (a later one wins), equality
// and hashing whatever the member order, and the same answers once it is large enough to be indexed.
import FaultlineProtocol
import XCTest

final class JSONObjectTests: XCTestCase {
    func testRepeatedKeyKeepsItsPlaceAndTakesTheLaterValue() throws {
        let v = try JSONParser.parse(Data(#"{"a":1,"b":2,"a":3}"#.utf8))
        guard case .object(let o) = v else { return XCTFail("not an object") }
        XCTAssertEqual(o.count, 2)
        XCTAssertEqual(o.keys, ["a", "b"])
        XCTAssertEqual(o["a"], 3)
        XCTAssertEqual(v.jsonString, #"{"a":3,"b":2}"#)
        let literal: JSONValue = ["x": 1, "x": 2]
        XCTAssertEqual(literal["x"], 2)
    }

    func testEqualityAndHashIgnoreMemberOrder() throws {
        let a = try JSONParser.parse(Data(#"{"a":1,"b":[true,null],"c":{"d":"e","f":1.5}}"#.utf8))
        let b = try JSONParser.parse(Data(#"{"c":{"f":1.5,"d":"e"},"b":[true,null],"a":1}"#.utf8))
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.hashValue, b.hashValue)
        XCTAssertEqual(Set([a, b]).count, 1)
        let c = try JSONParser.parse(Data(#"{"a":1,"b":[true,null],"c":{"d":"e","f":2.5}}"#.utf8))
        XCTAssertNotEqual(a, c)
        XCTAssertNotEqual(try JSONParser.parse(Data(#"{"a":1}"#.utf8)), try JSONParser.parse(Data(#"{"a":1,"b":1}"#.utf8)))
    }

    func testMutationReadsLikeADictionary() {
        var o: JSONObject = ["one": 1, "two": 2]
        o["three"] = 3
        o["one"] = nil
        XCTAssertEqual(o.keys, ["two", "three"])
        XCTAssertEqual(o.updateValue(22, forKey: "two"), 2)
        XCTAssertEqual(o["two"], 22)
        XCTAssertNil(o.removeValue(forKey: "absent"))
        XCTAssertEqual(o.mapValues { $0.int64Value ?? 0 }, ["two": 22, "three": 3])
        XCTAssertEqual(o.filter { $0.key == "three" }.keys, ["three"])
        o.merge(["three": 30, "four": 4]) { old, new in new }
        XCTAssertEqual(o.dictionary, ["two": 22, "three": 30, "four": 4])
        var seen: [String] = []
        for (k, _) in o { seen.append(k) }
        XCTAssertEqual(seen, ["two", "three", "four"])
    }

    /// Past the indexing threshold every read, replacement and removal gives what a Dictionary
    /// would, checked against one member by member.
    func testLargeObjectAgreesWithADictionary() throws {
        var o = JSONObject()
        var d: [String: JSONValue] = [:]
        for i in 0..<300 {
            let key = "k\(i % 211)"  // some keys set twice
            o[key] = .int(Int64(i))
            d[key] = .int(Int64(i))
        }
        for i in stride(from: 0, to: 211, by: 7) {
            o["k\(i)"] = nil
            d["k\(i)"] = nil
        }
        o["late"] = "x"
        d["late"] = "x"
        XCTAssertEqual(o.count, d.count)
        for (k, v) in d { XCTAssertEqual(o[k], v, k) }
        XCTAssertNil(o["k0"])
        XCTAssertEqual(o.dictionary, d)
        XCTAssertEqual(JSONValue.object(o), JSONValue.object(d))
    }

    /// A hostile object with very many distinct keys parses (a quadratic key search would not
    /// finish within the suite's time), and its members are all there.
    func testObjectWithManyKeysParses() throws {
        var text = "{"
        for i in 0..<100_000 { text += (i > 0 ? "," : "") + "\"key\(i)\":\(i)" }
        text += ",\"key5\":\"again\"}"
        let v = try JSONParser.parse(Data(text.utf8))
        guard case .object(let o) = v else { return XCTFail("not an object") }
        XCTAssertEqual(o.count, 100_000)
        XCTAssertEqual(o["key99999"], 99_999)
        XCTAssertEqual(o["key5"], "again")
    }

    func testCodableRoundTrip() throws {
        let v: JSONValue = ["a": ["b": [1, 2.5, "c", nil, true]]]
        let data = try JSONEncoder().encode(v)
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: data), v)
    }
}
