// A virtual address in a process or an ELF file; FrameAddress says which kind a frame holds.

/// A virtual address in a process or an ELF file.
public struct Address: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var value: UInt64
    public init(_ value: UInt64) { self.value = value }
    public var hex: String { "0x" + String(value, radix: 16) }
    public var description: String { hex }
    public static func < (l: Address, r: Address) -> Bool { l.value < r.value }

    /// Parses "0x1a2b", "1a2b" or decimal when `allowDecimal`.
    public init?(string: String) {
        if let v = Self.parseASCIIHex(string) { value = v; return }
        var s = Substring(string.trimmingWhitespaceAndNewlines())
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        guard !s.isEmpty, let v = UInt64(s, radix: 16) else { return nil }
        value = v
    }
}

extension Address {
    /// The common form ("0x" and 1–16 hex digits, no spaces or signs) read byte by byte; nil for
    /// anything else, which the general parse above decides (Character-wise trimming and the
    /// generic integer parse were most of the time ingest spent reading a stack's addresses).
    static func parseASCIIHex(_ string: String) -> UInt64? {
        var string = string
        return string.withUTF8 { b -> UInt64? in
            guard b.count >= 3, b.count <= 18, b[0] == UInt8(ascii: "0"), b[1] | 0x20 == UInt8(ascii: "x") else { return nil }
            var v: UInt64 = 0
            for i in 2..<b.count {
                let c = b[i]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt64(d)
            }
            return v
        }
    }
}
