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
    func createPublicKey(projectID: Int64, allowedAppIDs: [String]) throws -> PublicKeyRecord
    /// Every key of a project (nil: of every project), for listing.
    func publicKeys(projectID: Int64?) throws -> [PublicKeyRecord]
    /// Creates a server token; only its hash is stored, so the value is shown once.
    func createServerToken(name: String) throws -> String
}
