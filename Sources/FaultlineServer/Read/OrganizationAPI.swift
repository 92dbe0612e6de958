// Sentry's organization and project-key reads, so sentry-cli (`organizations list`, `projects
// list`) and tools that look a DSN up by project work against Faultline. One server is one
// organization: any organization slug in a path is this one, and the list names it by the slug
// `organizationSlug`.
import Foundation
import FaultlineProtocol

extension ReadAPI {
    /// The slug the organization list gives (paths accept any).
    static let organizationSlug = "faultline"

    /// Sentry's dates: RFC 3339 in UTC.
    static func sentryDate(_ t: Double) -> JSONValue {
        .string(Date(timeIntervalSince1970: t).formatted(.iso8601))
    }

    /// Sentry's organization summary; it was made with its first project.
    func organizationJSON(slug: String) throws -> JSONValue {
        let created = try store.projects().map(\.created).min() ?? Date().timeIntervalSince1970
        return [
            "id": "1", "slug": .string(slug), "name": "Faultline", "dateCreated": Self.sentryDate(created), "status": ["id": "active", "name": "active"],
            "isEarlyAdopter": false, "require2FA": false, "requireEmailVerification": false, "features": [], "avatar": ["avatarType": "letter_avatar"],
            "links": ["organizationUrl": .string(publicURL ?? ""), "regionUrl": .string(publicURL ?? "")]
        ]
    }

    /// A project as Sentry names one inside other objects (an issue's `project`).
    static func projectReference(_ p: ProjectRecord) -> JSONValue {
        ["id": .string(String(p.id)), "slug": .string(p.slug), "name": .string(p.name), "platform": .null]
    }

    /// Sentry's project summary, as the organization's project list gives it.
    func projectSummaryJSON(_ p: ProjectRecord, organization: JSONValue) -> JSONValue {
        var o = Self.projectReference(p).objectValue ?? [:]
        o["dateCreated"] = Self.sentryDate(p.created)
        o["isMember"] = true
        o["hasAccess"] = true
        o["isBookmarked"] = false
        o["status"] = "active"
        o["features"] = []
        o["organization"] = organization
        return .object(o)
    }

    /// `GET /api/0/organizations/`.
    func organizations() throws -> HTTPResponse { .json([try organizationJSON(slug: Self.organizationSlug)]) }

    /// `GET /api/0/organizations/<org>/`: the organization with its projects.
    func organization(_ slug: String) throws -> HTTPResponse {
        guard var o = try organizationJSON(slug: slug).objectValue else { return .detail(500, "organization") }
        o["projects"] = .array(try store.projects().map(Self.projectReference))
        return .json(.object(o))
    }

    /// `GET /api/0/organizations/<org>/projects/`.
    func organizationProjects(_ slug: String) throws -> HTTPResponse {
        let organization = try organizationJSON(slug: slug)
        return .json(.array(try store.projects().map { projectSummaryJSON($0, organization: organization) }))
    }

    /// `GET /api/0/projects/<org>/<project>/keys/`: the project's public keys with their DSN, in
    /// Sentry's shape. The DSN's host is the server's public URL, else the address the request
    /// reached.
    func projectKeys(_ r: HTTPRequest, project slug: String) throws -> HTTPResponse {
        guard let project = try store.project(idOrSlug: slug) else { return .detail(404, "no project '\(slug)'") }
        let base = ServerBaseURL.of(r, publicURL: publicURL)
        guard let url = URLComponents(string: base), let scheme = url.scheme, let host = url.host else {
            return .detail(500, "the server's public URL is not a URL")
        }
        let authority = host + (url.port.map { ":\($0)" } ?? "") + url.path.replacingOccurrences(of: "/$", with: "", options: .regularExpression)
        let keys = try administration.publicKeys(projectID: project.id).map { k -> JSONValue in
            let dsn = "\(scheme)://\(k.key.value)@\(authority)/\(project.id)"
            return [
                "id": .string(k.key.value), "name": "Default", "label": "Default", "public": .string(k.key.value), "secret": .null,
                "projectId": .int(project.id), "isActive": true, "dateCreated": Self.sentryDate(project.created),
                "dsn": [
                    "public": .string(dsn), "secret": .string(dsn),
                    "minidump": .string("\(scheme)://\(authority)/api/\(project.id)/minidump/?sentry_key=\(k.key.value)")
                ]
            ]
        }
        return .json(.array(keys))
    }
}
