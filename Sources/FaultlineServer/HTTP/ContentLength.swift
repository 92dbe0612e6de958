// A Content-Length header's value as a number of bytes, however large it claims to be.
import Foundation

enum ContentLength {
    /// The declared length: ASCII digits (surrounding blanks allowed). A value beyond UInt64 is
    /// UInt64.max, so it still compares as too large; Int(_:) would give nil for 2^63 and up and
    /// let such a request skip the early 413. Nil for anything that is not a number.
    static func parse(_ text: String) -> UInt64? {
        // Every request names one: a value of bare digits (nearly all) skips Foundation's trimming.
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) { return UInt64(text) ?? UInt64.max }
        let digits = text.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(digits) ?? UInt64.max
    }
}
