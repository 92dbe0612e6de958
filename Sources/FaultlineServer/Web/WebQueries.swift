// What the web pages read and change: the pages' view of the store (`WebStore`, kept out of the
// `Store` protocol on purpose: presentation queries and web-only state), with the per-issue
// statistics cache and the environment indexer's logic, the same over SQLite and PostgreSQL.
import Foundation
import FaultlineProtocol

/// Filters and order of the issues list; everything here comes from the query string.
struct IssueQuery {
    enum Sort: String, CaseIterable { case lastSeen = "last_seen", firstSeen = "first_seen", count }
    var sort: Sort = .lastSeen
    var status: String = "unresolved"   // unresolved | resolved | all
    var release: String = ""
    var environment: String = ""
    var text: String = ""
    /// Keyset cursor: the sort value and id of the last row of the previous page.
    var after: (value: Double, id: Int64)?
    var limit = 50
}

struct IssueRow {
    var issue: IssueRecord
    var status: String
    var installs: Int64
    var perDay: [Int64]
    var sortValue: Double
}

struct OccurrenceRow {
    var id: Int64
    var eventID: String
    var timestamp: Double
    var release: String?
    var installID: String?
}

struct WebUploadInfo {
    var tokenName: String
    var uploaded: Double
}

struct WebUser {
    var name: String
    var salt: Data
    var hash: Data
}

final class WebQueries: @unchecked Sendable {
    let store: any Store & WebStore
    /// Days the issues list's sparkline covers.
    static let sparkDays = 14

    /// Per-issue sparkline and installs, reused while the issue's count, last seen and the day
    /// are unchanged: any new, moved or merged occurrence changes the count or last seen (backfill
    /// and merges recompute both), so a hit is never stale. Saves a scan of a big issue's
    /// occurrences on every list view.
    private struct StatsKey: Equatable { var count: Int64; var lastSeen: Double; var day: Int64 }
    private struct IssueStats { var key: StatsKey; var perDay: [Int64]; var installs: Int64 }
    private let statsLock = NSLock()
    private var statsCache: [Int64: IssueStats] = [:]

    init(store: any Store & WebStore) { self.store = store }

    // MARK: Issues list

    func issues(projectID: Int64, _ q: IssueQuery, now: Double = Date().timeIntervalSince1970) throws -> [IssueRow] {
        let dayNow = Int64(now / 86400)
        let firstDay = dayNow - Int64(Self.sparkDays) + 1
        var rows: [IssueRow] = []
        for (id, status, sortValue) in try store.webIssueHeads(projectID: projectID, q) {
            guard var i = try store.issue(id: id), i.id == id else { continue }  // merged away since the head query
            i.releases = Array(i.releases.prefix(6))
            let key = StatsKey(count: i.count, lastSeen: i.lastSeen, day: dayNow)
            statsLock.lock(); let cached = statsCache[id]; statsLock.unlock()
            var perDay = [Int64](repeating: 0, count: Self.sparkDays)
            var installs: Int64 = 0
            if let cached, cached.key == key {
                (perDay, installs) = (cached.perDay, cached.installs)
            } else {
                for (day, count) in try store.webOccurrencesPerDay(issueID: id, since: Double(firstDay) * 86400) {
                    let idx = Int(day - firstDay)
                    if idx >= 0 && idx < perDay.count { perDay[idx] = count }
                }
                installs = try store.webInstalls(issueID: id)
                statsLock.lock()
                if statsCache.count > 50_000 { statsCache.removeAll() }
                statsCache[id] = IssueStats(key: key, perDay: perDay, installs: installs)
                statsLock.unlock()
            }
            rows.append(IssueRow(issue: i, status: status, installs: installs, perDay: perDay, sortValue: sortValue))
        }
        return rows
    }

    /// Releases and environments seen in a project, for the filter menus.
    func releases(projectID: Int64) throws -> [String] { try store.webReleases(projectID: projectID) }
    func environments() throws -> [String] { try store.webEnvironments() }
    func status(issueID: Int64) throws -> String { try store.webStatus(issueID: issueID) ?? "unresolved" }
    func installs(issueID: Int64) throws -> Int64 { try store.webInstalls(issueID: issueID) }
    /// First release an issue was seen in (by its earliest occurrence).
    func firstRelease(issueID: Int64) throws -> String? { try store.webFirstRelease(issueID: issueID) }

    // MARK: Occurrences

    /// Newest first, keyset on id (`before`), without reading the event blobs.
    func occurrences(issueID: Int64, before: Int64?, limit: Int) throws -> [OccurrenceRow] {
        try store.webOccurrences(issueID: issueID, before: before ?? Int64.max, limit: limit)
    }

    // MARK: Actions (each one transaction)

    func setStatus(issueID: Int64, _ status: String) throws {
        try store.webSetStatus(issueID: issueID, status, changed: Date().timeIntervalSince1970)
    }

    /// Moves every occurrence of `source` into `target` and marks `source` merged (its id keeps
    /// resolving to `target`, as after a backfill merge). Both must be live issues of one project.
    func merge(_ source: Int64, into target: Int64) throws {
        try IssueMerger.merge(source, into: target, in: store)
    }

    // MARK: Debug files

    func recordUploader(buildID: String, tokenName: String) throws {
        try store.webRecordUploader(buildID: buildID, tokenName: tokenName, uploaded: Date().timeIntervalSince1970)
    }

    func uploaders() throws -> [String: WebUploadInfo] { try store.webUploaders() }

    func tokenName(token: String) throws -> String? { try store.webTokenName(hash: SHA256Hash.hex(Data(token.utf8))) }

    /// Issues whose stored stacks go through a build-id (what a debug file makes readable).
    func issues(referencing buildID: String, limit: Int) throws -> [(id: Int64, title: String, symbolicated: Bool)] {
        try store.webIssues(referencing: buildID, limit: limit)
    }

    // MARK: Items (logs, sessions)

    /// Newest items of one type, keyset on id; payloads as stored.
    func items(projectID: Int64, type: String, before: Int64?, limit: Int) throws -> [(id: Int64, received: Double, payload: Data)] {
        try store.webItems(projectID: projectID, type: type, before: before ?? Int64.max, limit: limit)
    }

    // MARK: Users

    func user(_ name: String) throws -> WebUser? { try store.webUser(name) }
    func setUser(_ u: WebUser) throws { try store.webSetUser(u, created: Date().timeIntervalSince1970) }
    func users() throws -> [String] { try store.webUsers() }

    // MARK: Environment index

    /// Records the environment of occurrences grouped since the last call (bounded batch), per
    /// distinct stack: stacks never change issue independently of their occurrences, so
    /// (environment, stack) answers "issues seen in environment X" across backfills and merges.
    /// Returns how many occurrences it looked at.
    @discardableResult
    func indexEnvironments(batch: Int = 2000) throws -> Int {
        let rows = try store.webGroupedOccurrences(after: try store.webEnvironmentIndexPosition(), limit: batch)
        guard let maxID = rows.last?.id else { return 0 }
        var pairs = Set<[String]>()
        for (_, key, blob) in rows {
            guard let key, let event = try? StoredEvent.decode(blob) else { continue }
            pairs.insert([String((event["environment"]?.stringValue ?? "production").prefix(200)), key])
        }
        try store.webIndexEnvironments(pairs.map { (environment: $0[0], stackKey: $0[1]) }, position: maxID)
        return rows.count
    }
}
