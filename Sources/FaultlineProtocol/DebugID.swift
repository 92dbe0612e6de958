// Sentry's debug id: the first 16 bytes of a build-id as a little-endian GUID.

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
