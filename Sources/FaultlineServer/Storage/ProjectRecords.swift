// Projects and their public keys, as the store returns them.
import Foundation
import FaultlineProtocol

public struct ProjectRecord: Sendable, Equatable {
    public let id: Int64
    public let slug: String
    public let name: String
    /// The grouping rules its new events follow.
    public var groupingConfig = GroupingConfig.newProjects
    /// Whether frames' local variables (`vars`, which can hold secrets) are stored; off unless the
    /// project opted in, and then ingest drops them before anything is stored.
    public var keepsFrameVariables = false
    /// Whether the address an event came from is kept when the event asks for it (`{{auto}}`,
    /// InferredIPAddress); on unless turned off (Sentry's "Prevent Storing of IP Addresses").
    public var storesIPAddresses = true
    /// When it was made (seconds since the epoch).
    public var created: Double = 0
}

public struct PublicKeyRecord: Sendable, Equatable {
    public let key: PublicKey
    public let projectID: Int64
    /// Application ids allowed to send with this key; empty means any.
    public let allowedAppIDs: [String]
}
