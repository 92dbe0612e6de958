// Addresses and frames: a program counter and a return address are different things.

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

/// One entry of a captured stack. Frame 0 of a crash is the exact faulting instruction; every
/// other frame is a return address, which points *after* the call, so lookups use `address - 1`.
public enum FrameAddress: Hashable, Sendable {
    case programCounter(Address)
    case returnAddress(Address)

    public var address: Address {
        switch self { case .programCounter(let a), .returnAddress(let a): return a }
    }
    /// The address to look up in debug info: inside the call instruction for return addresses.
    public var lookupAddress: Address {
        switch self {
        case .programCounter(let a): return a
        case .returnAddress(let a): return a.value > 0 ? Address(a.value - 1) : a
        }
    }
    public var isReturnAddress: Bool { if case .returnAddress = self { return true } else { return false } }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
