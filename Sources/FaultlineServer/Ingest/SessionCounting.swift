// Session counts from `session`/`sessions` items, with client numbers checked before summing.
import Foundation
import FaultlineProtocol

/// Sessions started and crashed according to one `session` or `sessions` item. Client numbers
/// are checked before they are summed: a count that is not an integer in 0…`maxSessionCount`
/// makes the item malformed, and sums saturate at `Int64.max` (they can never trap).
enum SessionCounting {
    struct Invalid: Error, CustomStringConvertible { let description: String }

    static func counts(_ item: Envelope.Item, limits: IngestLimits) throws -> (started: Int64, crashed: Int64) {
        let v = try JSONParser.parse(item.payload)
        switch item.type {
        case "session":
            let started: Int64 = v["init"]?.boolValue == true ? 1 : 0
            let crashed: Int64 = v["status"]?.stringValue == "crashed" ? 1 : 0
            return (started, crashed)
        case "sessions":
            var s: Int64 = 0, c: Int64 = 0
            for (i, a) in (v["aggregates"]?.arrayValue ?? []).enumerated() {
                func count(_ name: String) throws -> Int64 {
                    guard let raw = a[name] else { return 0 }
                    guard let n = raw.int64Value, n >= 0, n <= limits.maxSessionCount else {
                        throw Invalid(description: "aggregates[\(i)].\(name) must be an integer from 0 to \(limits.maxSessionCount)")
                    }
                    return n
                }
                let crashed = try count("crashed")
                for n in [try count("exited"), try count("errored"), try count("abnormal"), crashed] { s = saturatingAdd(s, n) }
                c = saturatingAdd(c, crashed)
            }
            return (s, c)
        default:
            return (0, 0)
        }
    }

    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : r
    }
}
