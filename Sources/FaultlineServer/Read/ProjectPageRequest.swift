// What a paged read API below a project takes from its request, read one way for all of them:
// the project (by id or slug), the keyset page (`limit`, `cursor`) and an optional `since`.
import FaultlineProtocol

struct ProjectPageRequest {
    let project: ProjectRecord
    let page: KeysetPage
    /// Seconds since the epoch; nil when the request gave none.
    let since: Double?

    /// The request's parts, or the answer for the first one that is wrong (404, 400).
    static func read(_ r: HTTPRequest, project slug: String, store: any Store) throws -> Result<ProjectPageRequest, HTTPResponseBox> {
        guard let project = try store.project(idOrSlug: slug) else { return .failure(.init(.detail(404, "no project '\(slug)'"))) }
        let page: KeysetPage
        switch KeysetPage.of(r) {
        case .success(let p): page = p
        case .failure(let e): return .failure(.init(e.response))
        }
        var since: Double?
        if let s = r.query["since"], !s.isEmpty {
            // The timestamp rule events follow: finite, within what ingest keeps.
            guard let t = EventFields.timestamp(Double(s).map(JSONValue.double) ?? .string(s)) else {
                return .failure(.init(.detail(400, "since must be seconds since the epoch or an RFC 3339 time")))
            }
            since = t
        }
        return .success(ProjectPageRequest(project: project, page: page, since: since))
    }
}
