// One result row, whichever database it came from: SQLiteRow and PGRow read columns the same way,
// so a row → record mapping written once over `SQLRow` serves both stores (the column lists they
// select are the same text).
import Foundation

protocol SQLRow {
    func isNull(_ i: Int32) -> Bool
    func text(_ i: Int32) -> String?
    func int(_ i: Int32) -> Int64
    func double(_ i: Int32) -> Double
    func blob(_ i: Int32) -> Data
}

extension SQLiteRow: SQLRow {}
extension PGRow: SQLRow {}

extension SQLValue {
    /// `.text(s)`, or `.null` for nil.
    static func nullable(_ s: String?) -> SQLValue { s.map { .text($0) } ?? .null }
}
