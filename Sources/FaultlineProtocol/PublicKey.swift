// The key a client sends events with (public, part of the DSN).
import FoundationEssentials

/// A public key embedded in apps. Sentry's format: 32 lowercase hex characters; any other
/// Sentry-compatible key also parses, so DSNs of other servers work unchanged.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { value }
}
