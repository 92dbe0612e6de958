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
        var s = Substring(string.trimmingWhitespace())
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        guard !s.isEmpty, let v = UInt64(s, radix: 16) else { return nil }
        value = v
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
