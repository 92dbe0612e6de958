// libFuzzer target: the ingest JSON parser. Checks that validation and parsing agree, that a
// selective parse (JSONSelection, as ingest reads an event) accepts exactly what a full parse
// accepts, and that a parsed document survives serialize → parse unchanged.
import Foundation
import FaultlineProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let parsed = try? JSONParser.parse(bytes)
    let valid = (try? JSONParser.validate(bytes)) != nil
    precondition(valid == (parsed != nil), "validate and parse disagree")
    _ = try? JSONParser.parseObject(bytes, keeping: ["event_id", "exception", "debug_meta"])
    let selected = try? JSONParser.parseObject(bytes, selecting: selection)
    precondition((selected != nil) == valid, "a selective parse and a full one disagree on validity")
    if let selected, let v = parsed, case .object = v {
        precondition(selected == pruned(v, by: selection), "a selective parse built other values than the full parse cut down")
    }
    if let v = parsed {
        let again = try? JSONParser.parse(v.serialized())
        precondition(again != nil, "serialized output does not parse")
        precondition(again!.serialized() == v.serialized(), "round trip changed the document")
    }
    return 0
}

/// The full parse cut down as the selection says: what a selective parse must build.
func pruned(_ value: JSONValue, by selection: JSONSelection) -> JSONValue {
    switch value {
    case .object(let object):
        var out = JSONObject()
        for m in object.members {
            switch selection.member(m.key) {
            case .whole: out[m.key] = m.value
            case .selected(let inner): out[m.key] = pruned(m.value, by: inner)
            case .presenceOnly: out[m.key] = .null
            case .skipped: continue
            }
        }
        return .object(out)
    case .array(let elements): return .array(elements.map { pruned($0, by: selection) })
    default: return value
    }
}

/// Every kind of member rule, nested, as ingest's event selection uses them.
let selection: JSONSelection = {
    let inner = JSONSelection(["registers": .skipped, "seen": .presenceOnly], othersWhole: true)
    return JSONSelection(["a": .selected(inner), "b": .whole, "c": .presenceOnly, "d": .selected(JSONSelection(only: ["x"]))], othersWhole: false)
}()
