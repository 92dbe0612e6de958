// The feature store of project administration (`faultline projects`, the server's first-start
// bootstrap, `ProjectAdministration`): creating projects, keys and server tokens, and changing a
// project's settings. Looking a project, key or token up is the core `Store`'s: ingest and every
// authenticated request do it.
import Foundation
import FaultlineProtocol

public protocol ProjectAdministrationStore: AnyObject, Sendable {
    func createProject(slug: String, name: String) throws -> ProjectRecord
    /// The grouping rules the project's events follow from now on (GroupingConfig).
    func setGroupingConfig(projectID: Int64, _ config: GroupingConfig) throws
    /// Whether the project's events keep their frames' local variables from now on.
    func setKeepsFrameVariables(projectID: Int64, _ keep: Bool) throws
    /// Whether the project's events get the address they came from when they ask, from now on.
    func setStoresIPAddresses(projectID: Int64, _ store: Bool) throws
    func createPublicKey(projectID: Int64, allowedAppIDs: [String]) throws -> PublicKeyRecord
    /// Every key of a project (nil: of every project), for listing.
    func publicKeys(projectID: Int64?) throws -> [PublicKeyRecord]
    /// Creates a server token; only its hash is stored, so the value is shown once.
    func createServerToken(name: String) throws -> String
    /// Deletes a public key; false when there was none. Ingest refuses it at once in this
    /// process and within `CredentialLifetime.seconds` in every other.
    func revokePublicKey(_ key: String) throws -> Bool
    /// The server tokens (never their values): name, the value's first characters, created.
    func serverTokens() throws -> [ServerTokenRecord]
    /// Deletes the server tokens with this name or value prefix; how many there were.
    func revokeServerTokens(nameOrPrefix: String) throws -> Int
}

/// A server token as listed: what identifies it to people, never its value.
public struct ServerTokenRecord: Sendable, Equatable {
    public let name: String
    /// The value's first characters (`flst_a1b2`), as printed when it was made.
    public let prefix: String
    public let created: Double
    public init(name: String, prefix: String, created: Double) { self.name = name; self.prefix = prefix; self.created = created }
}
