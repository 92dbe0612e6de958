// What the store keeps of an issue's identity: Grouping computes it (Fingerprinter), the store
// persists it (`issues.fingerprint`, title, culprit, symbolicated), so the type lives with the
// records and Storage depends on nothing in Grouping for it.
import Foundation

/// The identity of an issue plus what is shown for it.
public struct Fingerprint: Sendable, Hashable {
    public var hash: String
    public var title: String
    public var culprit: String
    /// True when at least one grouping frame was resolved by the server's own symbolication.
    public var symbolicated: Bool
}
