// Identity of code: a GNU build-id (Sentry's debug id derived from it is DebugID).

/// A GNU build-id (the `NT_GNU_BUILD_ID` note), kept as raw bytes and printed as lowercase hex.
public struct BuildID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// The bytes in one call (the synthesized hash fed them one at a time): grouping hashes every
    /// frame's build-id of every event it groups. Equal bytes, equal hash, as `==` needs.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

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
    /// as Sentry does for little-endian ELF, x86_64's and aarch64's (same as `uuid.UUID(bytes_le=…)`), age 0.
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
