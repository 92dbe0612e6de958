// Project administration over any `ProjectAdministrationStore`: the rules (slugs) live here, not in the CLI, so
// `faultline projects`, the server's bootstrap and pages to come apply them alike.
import Foundation
import FaultlineProtocol

public struct ProjectAdministration {
    public let store: any ProjectAdministrationStore
    public init(store: any ProjectAdministrationStore) { self.store = store }

    /// The slug for a project name: lowercase letters and digits, other characters as `-`. URLs
    /// take a project id or a slug, so an all-digit slug (which would read as another project's
    /// id) gets a `p-` prefix.
    public static func slug(forName name: String) -> String {
        let slug = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
        return slug.allSatisfy(\.isNumber) ? "p-" + slug : slug
    }

    /// Creates a project named `name` with one public key (limited to `allowedAppIDs`, if any).
    public func createProject(named name: String, allowedAppIDs: [String] = []) throws -> (ProjectRecord, PublicKeyRecord) {
        let p = try store.createProject(slug: Self.slug(forName: name), name: name)
        return (p, try store.createPublicKey(projectID: p.id, allowedAppIDs: allowedAppIDs))
    }

    /// The DSN a client uses with `key` for project `p` at the server's `url`.
    public static func dsn(key: PublicKey, project p: ProjectRecord, serverURL url: String) -> String {
        DSN.text(serverURL: url, publicKey: key, projectID: String(p.id))
    }
}
