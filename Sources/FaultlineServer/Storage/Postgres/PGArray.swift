// PostgreSQL array literals ('{…}') for one parameter holding a whole column of values: a batch is
// then one statement over `unnest($1::bigint[], …)` instead of a round trip per row, whatever its
// size (and one prepared statement, where a VALUES list would be one per batch length).
import Foundation

enum PGArray {
    static func ints(_ values: [Int64]) -> SQLValue {
        .text("{" + values.map { String($0) }.joined(separator: ",") + "}")
    }

    static func doubles(_ values: [Double]) -> SQLValue {
        .text("{" + values.map { "\($0)" }.joined(separator: ",") + "}")
    }

    /// Every element quoted (so commas, braces, spaces and the word NULL stay text); nil is NULL.
    static func texts(_ values: [String?]) -> SQLValue {
        .text("{" + values.map { $0.map(quoted) ?? "NULL" }.joined(separator: ",") + "}")
    }

    /// bytea elements in hex input format ("\x…", its backslash escaped inside the literal).
    static func blobs(_ values: [Data]) -> SQLValue {
        let hex = Array("0123456789abcdef".utf8)
        return .text(
            "{"
                + values.map { d in
                    var s = [UInt8]("\"\\\\x".utf8)
                    s.reserveCapacity(d.count * 2 + 5)
                    for b in d { s.append(hex[Int(b >> 4)]); s.append(hex[Int(b & 15)]) }
                    s.append(UInt8(ascii: "\""))
                    return String(decoding: s, as: UTF8.self)
                }.joined(separator: ",") + "}")
    }

    /// A bytea[] in PostgreSQL's binary array format, sent as a binary parameter: the events of an
    /// ingest batch are then neither written as hex here nor parsed from it there.
    static func binaryBlobs(_ values: [Data]) -> SQLValue {
        var out = Data(capacity: 20 + values.reduce(0) { $0 + 4 + $1.count })
        func int32(_ v: Int32) { withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) } }
        int32(1)  // dimensions
        int32(0)  // no NULL element
        int32(17)  // element type: bytea
        int32(Int32(values.count))
        int32(1)  // lower bound
        for v in values {
            int32(Int32(v.count))
            out.append(v)
        }
        return .blob(out)
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            if ch == "\"" || ch == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out + "\""
    }
}
