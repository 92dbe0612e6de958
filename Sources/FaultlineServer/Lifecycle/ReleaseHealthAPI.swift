// GET /api/0/projects/<org>/<project>/sessions/?since&cursor&limit: sessions started and crashed
// and the crash-free rate per release (all environments, and each), from the `session` and
// `sessions` items — the release-health page's tally (`SessionReading`) over the same bounded
// read (`HealthPage.scanLimit` newest items of each type, `HealthPage.scanBytes`, items larger
// than `ReleaseHealth.maxItemBytes` passed over). Releases are listed by name; the cursor is the
// last name of the previous page. When older items were left unread the answer says so in
// `X-Faultline-Partial: true`.
import Foundation
import FaultlineProtocol

struct ReleaseHealthAPI {
    let store: any Store
    let queries: WebQueries

    func handle(_ r: HTTPRequest, project slug: String) throws -> HTTPResponse {
        let request: ProjectPageRequest
        switch try ProjectPageRequest.read(r, project: slug, store: store) {
        case .success(let read): request = read
        case .failure(let refusal): return refusal.response
        }
        let (project, page, since) = (request.project, request.page, request.since)
        let (tally, partial) = try Self.tally(queries, projectID: project.id, since: since)
        let releases = tally.keys.sorted().filter { page.cursor == nil || $0 > page.cursor! }
        let shown = Array(releases.prefix(page.limit))
        let rows = shown.map { release -> JSONValue in
            let envs = tally[release] ?? [:]
            var o = Self.json(Self.total(envs))
            o["release"] = .string(release)
            o["environments"] = .object(envs.mapValues { .object(Self.json($0)) })
            return .object(o)
        }
        var response = KeysetPage.response(rows, next: releases.count > shown.count ? shown.last : nil, request: r)
        if partial { response.headers.append(("X-Faultline-Partial", "true")) }
        return response
    }

    /// The project's tally per release and environment over the bounded read, and whether older
    /// items were left unread.
    static func tally(_ queries: WebQueries, projectID: Int64, since: Double?) throws -> (tally: [String: [String: SessionTally]], partial: Bool) {
        var reading = SessionReading()
        var partial = false
        for type in ["session", "sessions"] {
            var reachedSince = false
            let stoppedAt = try queries.scanItems(
                projectID: projectID, type: type, before: nil, maxItems: HealthPage.scanLimit, maxBytes: HealthPage.scanBytes,
                maxItemBytes: ReleaseHealth.maxItemBytes, stop: { reachedSince }
            ) { _, received, payload in
                // Newest first: the first item received before `since` ends the read.
                if let since, received < since { reachedSince = true; return }
                reading.add(type: type, payload: payload)
            }
            partial = partial || (stoppedAt != nil && !reachedSince)
        }
        return (reading.tally, partial)
    }

    /// All environments of one release together.
    static func total(_ envs: [String: SessionTally]) -> SessionTally {
        envs.values.reduce(into: SessionTally()) { s, t in
            s.started = SessionCounting.saturatingAdd(s.started, t.started)
            s.crashed = SessionCounting.saturatingAdd(s.crashed, t.crashed)
        }
    }

    /// Sentry's `healthData` of a release in one project (`crashFreeSessions` is a percentage).
    static func sentryHealthData(_ t: SessionTally) -> JSONValue {
        [
            "hasHealthData": .bool(t.started > 0), "totalSessions": .int(t.started), "sessionsCrashed": .int(t.crashed),
            "crashFreeSessions": t.crashFreeRate.map { .double($0 * 100) } ?? .null
        ]
    }

    static func json(_ t: SessionTally) -> [String: JSONValue] {
        ["sessions": .int(t.started), "crashed": .int(t.crashed), "crash_free_rate": t.crashFreeRate.map(JSONValue.double) ?? .null]
    }
}
