// The server's administration token (secret).
import FoundationEssentials

/// A secret that can upload debug files and read data. Never shipped inside a binary, so it
/// has a prefix nobody can mistake for a public key.
public struct ServerToken: Hashable, Sendable, CustomStringConvertible {
    public static let prefix = "flst_"
    public let value: String
    public init?(_ value: String) {
        guard ServerToken.looksLikeServerToken(value) else { return nil }
        self.value = value
    }
    public var description: String { String(value.prefix(9)) + "…" }
    public static func looksLikeServerToken(_ s: String) -> Bool { s.hasPrefix(prefix) }
}
