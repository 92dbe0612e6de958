// Identity of code: a GNU build-id and the Sentry debug_id derived from it.

/// A GNU build-id (the `NT_GNU_BUILD_ID` note), kept as raw bytes and printed as lowercase hex.
public struct BuildID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses lowercase or uppercase hex; nil for odd lengths, non-hex or empty input.
    public init?(hex: String) {
        guard let bytes = HexBytes.decode(hex), !bytes.isEmpty else { return nil }
        self.bytes = bytes
    }

    public var hex: String { HexBytes.encode(bytes) }
    public var description: String { hex }

    /// The `.build-id/xx/rest` path fragment that gdb, debuginfod and our store use.
    public var buildIDPathComponents: (directory: String, file: String) {
        let h = hex
        return (String(h.prefix(2)), String(h.dropFirst(2)))
    }

    /// Sentry's debug_id: first 16 bytes (zero padded), fields 0-3, 4-5, 6-7 byte-swapped
    /// because ELF on x86_64 is little-endian (same as `uuid.UUID(bytes_le=…)`), age 0.
    public var debugID: DebugID {
        var b = Array(bytes.prefix(16))
        while b.count < 16 { b.append(0) }
        b[0...3].reverse(); b[4...5].reverse(); b[6...7].reverse()
        return DebugID(uuidBytes: b)
    }

    public static func < (l: BuildID, r: BuildID) -> Bool { l.hex < r.hex }

    public init(from decoder: Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        guard let id = BuildID(hex: s) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a hex build-id: \(s)"))
        }
        self = id
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer(); try c.encode(hex)
    }
}

/// Sentry's `debug_id`: a UUID (lowercase, dashed) plus an age, which is always 0 for ELF.
public struct DebugID: Hashable, Sendable, CustomStringConvertible {
    public let uuidBytes: [UInt8]
    public init(uuidBytes: [UInt8]) { precondition(uuidBytes.count == 16); self.uuidBytes = uuidBytes }

    /// Parses `c0bcc3f1-9827-fe65-3058-404b2831d9e6` with or without dashes or an `-0` age suffix.
    public init?(string: String) {
        var s = string.lowercased().replacingOccurrencesOfDash()
        if s.count == 33, s.hasSuffix("0") { s.removeLast() }
        guard s.count == 32, let b = HexBytes.decode(s) else { return nil }
        self.uuidBytes = b
    }

    public var description: String {
        let h = HexBytes.encode(uuidBytes)
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}

extension String {
    fileprivate func replacingOccurrencesOfDash() -> String { String(self.filter { $0 != "-" }) }
}

/// Hex helpers without Foundation so the crash-adjacent code paths stay light.
public enum HexBytes {
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](); out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
    public static func decode(_ hex: String) -> [UInt8]? {
        let u = Array(hex.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out = [UInt8](); out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo); i += 2
        }
        return out
    }
    @inline(__always) static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
