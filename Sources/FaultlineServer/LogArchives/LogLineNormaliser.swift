// Turns a log message into its pattern, so lines that differ only in variable parts count as
// one. Byte-level and allocation-free per line (it writes into a caller's buffer).
//
// Rules (docs/SERVER.md, "Line patterns"), applied left to right; a token is replaced only where
// it starts a word (the byte before it is not a letter, digit or `_`):
//   "…" and '…' (up to the closing quote; `\"` does not close)   → "<str>" / '<str>'
//   UUID 8-4-4-4-12 hex                                           → <uuid>
//   0x followed by hex digits                                      → <hex>
//   a word of 8 or more hex digits with at least one digit         → <hex>   (hashes, ids)
//   digits, optionally with one `.` and more digits                → <num>   (12ms → <num>ms)
// Everything else is kept as it is, so `order 17 failed` and `order 42 failed` both become
// `order <num> failed`, while `v2` and `sha1` stay.
public enum LogLineNormaliser {
    private static let str: [UInt8] = Array("<str>".utf8)
    private static let uuid: [UInt8] = Array("<uuid>".utf8)
    private static let hex: [UInt8] = Array("<hex>".utf8)
    private static let num: [UInt8] = Array("<num>".utf8)

    @inline(__always) static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7a) || b == 0x5f || b >= 0x80
    }
    @inline(__always) static func isHex(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66) }
    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Appends the pattern of `s` to `out`, stopping once `out` holds `limit` bytes (a pattern can
    /// be longer than its message: `""` becomes `"<str>"`). Returns false when it stopped early.
    @discardableResult
    static func normalise(_ s: UnsafeBufferPointer<UInt8>, into out: inout [UInt8], limit: Int = .max) -> Bool {
        let n = s.count
        var i = 0
        var prevWord = false
        while i < n {
            if out.count >= limit { return false }
            let b = s[i]
            if b == 0x22 || b == 0x27 {  // quoted string
                var j = i + 1
                while j < n && s[j] != b { j += s[j] == 0x5c ? 2 : 1 }
                if j < n {
                    out.append(b); out.append(contentsOf: str); out.append(b)
                    i = j + 1; prevWord = false
                    continue
                }
            }
            if !prevWord && isHex(b) {
                if let end = uuidEnd(s, i) { out.append(contentsOf: uuid); i = end; prevWord = false; continue }
                if b == 0x30, i + 2 < n, s[i + 1] | 0x20 == 0x78, isHex(s[i + 2]) {
                    var j = i + 2
                    while j < n && isHex(s[j]) { j += 1 }
                    out.append(contentsOf: hex); i = j; prevWord = false; continue
                }
                var j = i, digits = false
                while j < n && isHex(s[j]) { digits = digits || isDigit(s[j]); j += 1 }
                if j - i >= 8 && digits && (j == n || !isWordByte(s[j])) { out.append(contentsOf: hex); i = j; prevWord = false; continue }
                if isDigit(b) {
                    var k = i
                    while k < n && isDigit(s[k]) { k += 1 }
                    if k + 1 < n && s[k] == 0x2e && isDigit(s[k + 1]) { k += 1; while k < n && isDigit(s[k]) { k += 1 } }
                    out.append(contentsOf: num); i = k; prevWord = false; continue
                }
            }
            out.append(b)
            prevWord = isWordByte(b)
            i += 1
        }
        return true
    }

    private static func uuidEnd(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int? {
        guard i + 36 <= s.count else { return nil }
        for (k, groupEnd) in [8, 13, 18, 23].enumerated() {
            _ = k
            guard s[i + groupEnd] == 0x2d else { return nil }
        }
        for j in 0..<36 where ![8, 13, 18, 23].contains(j) { guard isHex(s[i + j]) else { return nil } }
        if i + 36 < s.count && isWordByte(s[i + 36]) { return nil }
        return i + 36
    }

    /// For tests and the API: the pattern of a string.
    public static func pattern(_ text: String) -> String {
        var out: [UInt8] = []
        var t = text
        t.withUTF8 { normalise($0, into: &out) }
        return String(decoding: out, as: UTF8.self)
    }
}
