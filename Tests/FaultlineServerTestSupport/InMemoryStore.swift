// The core `Store` in memory: a working implementation (not a recorder of calls) for unit tests of
// grouping and merges that need no database. It keeps the contract StoreConformance checks on the
// SQL stores: a merge re-points the merged issue, never its rows; rows read as the live issue;
// counts are what `recount` and `absorb` make them; an edit commits whole or not at all.
@testable import FaultlineServer
import FaultlineProtocol
import Foundation
import Synchronization

public final class InMemoryStore: Store, ProjectAdministrationStore, IssueReads, Sendable {
    struct Occurrence {
        var row: StoredOccurrence
        var processed = false
        var stackKey: String?
        /// The issue the row names; reads resolve it through `mergedInto`.
        var storedIssue: Int64?
    }

    struct Issue {
        var record: IssueRecord
        var releases: Set<String> = []
    }

    struct State {
        var projects: [ProjectRecord] = []
        var keys: [PublicKeyRecord] = []
        var tokens: Set<String> = []
        var occurrences: [Int64: Occurrence] = [:]
        var items: [IncomingItem] = []
        var sessions: [Int64: (total: Int64, crashed: Int64)] = [:]
        var issues: [Int64: Issue] = [:]
        var claims: [String: (holder: String, expires: Double)] = [:]
        var nextID: Int64 = 1

        mutating func newID() -> Int64 {
            defer { nextID += 1 }
            return nextID
        }

        /// The live issue `id` names (itself or the one it was merged into).
        func live(_ id: Int64) -> Int64? {
            guard let issue = issues[id] else { return nil }
            return issue.record.mergedInto ?? id
        }

        /// The ids whose rows are `id`'s: itself when live, and the issues merged into it.
        func members(_ id: Int64) -> Set<Int64> {
            guard let issue = issues[id], issue.record.mergedInto == nil else { return [] }
            return Set(issues.values.filter { $0.record.mergedInto == id }.map(\.record.id)).union([id])
        }

        func read(_ o: Occurrence) -> StoredOccurrence {
            var row = o.row
            row.issueID = o.storedIssue.flatMap(live)
            return row
        }

        func record(_ id: Int64) -> IssueRecord? {
            guard let issue = issues[id] else { return nil }
            var r = issue.record
            r.releases = issue.releases.sorted()
            return r
        }
    }

    private let state = Mutex(State())

    public init() {}

    private func withState<T: Sendable, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        try state.withLock { (s: inout State) throws(E) -> T in try body(&s) }
    }

    public func close() {}

    // MARK: Projects and keys

    public func createProject(slug: String, name: String) throws -> ProjectRecord {
        try withState { s in
            guard !s.projects.contains(where: { $0.slug == slug }) else { throw InMemoryStoreError.duplicateSlug(slug) }
            let p = ProjectRecord(id: s.newID(), slug: slug, name: name, created: Date().timeIntervalSince1970)
            s.projects.append(p)
            return p
        }
    }

    public func projects() throws -> [ProjectRecord] { withState { $0.projects } }

    public func project(idOrSlug: String) throws -> ProjectRecord? {
        withState { s in s.projects.first { String($0.id) == idOrSlug || $0.slug == idOrSlug } }
    }

    public func setKeepsFrameVariables(projectID: Int64, _ keep: Bool) throws {
        withState { s in
            if let i = s.projects.firstIndex(where: { $0.id == projectID }) { s.projects[i].keepsFrameVariables = keep }
        }
    }

    public func setStoresIPAddresses(projectID: Int64, _ store: Bool) throws {
        withState { s in
            if let i = s.projects.firstIndex(where: { $0.id == projectID }) { s.projects[i].storesIPAddresses = store }
        }
    }

    public func setGroupingConfig(projectID: Int64, _ config: GroupingConfig) throws {
        withState { s in
            if let i = s.projects.firstIndex(where: { $0.id == projectID }) { s.projects[i].groupingConfig = config }
        }
    }

    public func createPublicKey(projectID: Int64, allowedAppIDs: [String]) throws -> PublicKeyRecord {
        let record = PublicKeyRecord(key: Keys.newPublicKey(), projectID: projectID, allowedAppIDs: allowedAppIDs)
        withState { $0.keys.append(record) }
        return record
    }

    public func publicKeys(projectID: Int64?) throws -> [PublicKeyRecord] {
        withState { s in s.keys.filter { projectID == nil || $0.projectID == projectID } }
    }

    public func publicKey(_ key: String) throws -> PublicKeyRecord? { withState { s in s.keys.first { $0.key.value == key } } }

    public func createServerToken(name: String) throws -> String {
        let token = Keys.newServerToken()
        withState { _ = $0.tokens.insert(token) }
        return token
    }

    public func isServerToken(_ token: String) throws -> Bool { withState { $0.tokens.contains(token) } }

    public func revokePublicKey(_ key: String) throws -> Bool {
        withState { s in
            let before = s.keys.count
            s.keys.removeAll { $0.key.value == key }
            return s.keys.count < before
        }
    }

    public func serverTokens() throws -> [ServerTokenRecord] {
        withState { s in s.tokens.sorted().map { ServerTokenRecord(name: "token", prefix: String($0.prefix(9)), created: 0) } }
    }

    public func revokeServerTokens(nameOrPrefix: String) throws -> Int {
        withState { s in
            let gone = s.tokens.filter { $0.hasPrefix(nameOrPrefix) || nameOrPrefix == "token" }
            s.tokens.subtract(gone)
            return gone.count
        }
    }

    // MARK: Ingest

    public func storeIngest(event: IncomingEvent?, items: [IncomingItem]) throws -> Int64? {
        withState { s in
            var id: Int64?
            if let e = event, !s.occurrences.values.contains(where: { $0.row.projectID == e.projectID && $0.row.eventID == e.eventID }) {
                let new = s.newID()
                s.occurrences[new] = Occurrence(
                    row: StoredOccurrence(
                        id: new, projectID: e.projectID, eventID: e.eventID, received: e.received, timestamp: e.timestamp, release: e.release,
                        issueID: nil, compressedEvent: e.compressedEvent, clientAddress: e.clientAddress))
                id = new
            }
            for item in items {
                s.items.append(item)
                if item.sessionsStarted != 0 || item.sessionsCrashed != 0 {
                    let old = s.sessions[item.projectID] ?? (0, 0)
                    s.sessions[item.projectID] = (old.total + item.sessionsStarted, old.crashed + item.sessionsCrashed)
                }
            }
            return id
        }
    }

    public func unprocessedOccurrences(limit: Int) throws -> [StoredOccurrence] {
        withState { s in s.occurrences.values.filter { !$0.processed }.map(\.row).sorted { $0.id < $1.id }.prefix(limit).map { $0 } }
    }

    public func recordGrouping(_ outcomes: [GroupingOutcome]) throws {
        withState { s in
            for o in outcomes {
                guard var occurrence = s.occurrences[o.occurrenceID], !occurrence.processed else { continue }
                let issueID: Int64
                if let holder = s.issues.values.first(where: { $0.record.projectID == o.projectID && $0.record.fingerprint == o.fingerprint.hash }) {
                    // A merged issue keeps its fingerprint; its occurrences count into the live one.
                    issueID = holder.record.mergedInto ?? holder.record.id
                    let existing = s.issues[issueID]!.record
                    s.issues[issueID]!.record.count += 1
                    s.issues[issueID]!.record.firstSeen = existing.count == 0 ? o.timestamp : min(existing.firstSeen, o.timestamp)
                    s.issues[issueID]!.record.lastSeen = existing.count == 0 ? o.timestamp : max(existing.lastSeen, o.timestamp)
                } else {
                    issueID = s.newID()
                    s.issues[issueID] = Issue(
                        record: IssueRecord(
                            id: issueID, projectID: o.projectID, fingerprint: o.fingerprint.hash, title: o.fingerprint.title,
                            culprit: o.fingerprint.culprit, firstSeen: o.timestamp, lastSeen: o.timestamp, count: 1, releases: [],
                            symbolicated: o.fingerprint.symbolicated, mergedInto: nil))
                }
                if let release = o.release { s.issues[issueID]!.releases.insert(release) }
                occurrence.processed = true
                occurrence.storedIssue = issueID
                occurrence.stackKey = o.stackKey
                s.occurrences[o.occurrenceID] = occurrence
            }
        }
    }

    // MARK: Issues

    public func issues(projectID: Int64, limit: Int, offset: Int) throws -> [IssueRecord] {
        withState { s in
            let live = s.issues.values.map(\.record).filter { $0.projectID == projectID && $0.mergedInto == nil && $0.count > 0 }
            let sorted = live.sorted { ($0.lastSeen, $0.id) > ($1.lastSeen, $1.id) }
            return sorted.dropFirst(offset).prefix(limit).compactMap { s.record($0.id) }
        }
    }

    public func issue(id: Int64) throws -> IssueRecord? { withState { s in s.live(id).flatMap { s.record($0) } } }

    public func occurrences(issueID: Int64, limit: Int, offset: Int) throws -> [StoredOccurrence] {
        withState { s in
            let members = s.members(issueID)
            let rows = s.occurrences.values.filter { $0.storedIssue.map(members.contains) ?? false }.sorted { $0.row.id > $1.row.id }
            return rows.dropFirst(offset).prefix(limit).map { s.read($0) }
        }
    }

    public func occurrences(issueID: Int64, before: Int64, limit: Int) throws -> [StoredOccurrence] {
        withState { s in
            let members = s.members(issueID)
            let rows = s.occurrences.values.filter { ($0.storedIssue.map(members.contains) ?? false) && $0.row.id < before }.sorted { $0.row.id > $1.row.id }
            return rows.prefix(limit).map { s.read($0) }
        }
    }

    public func occurrence(projectID: Int64, eventID: String) throws -> StoredOccurrence? {
        withState { s in s.occurrences.values.first { $0.row.projectID == projectID && $0.row.eventID == eventID }.map { s.read($0) } }
    }

    public func occurrence(id: Int64) throws -> StoredOccurrence? { withState { s in s.occurrences[id].map { s.read($0) } } }

    public func totals() throws -> (occurrences: Int64, processed: Int64) {
        withState { s in (Int64(s.occurrences.count), Int64(s.occurrences.values.filter(\.processed).count)) }
    }

    public func counts(projectID: Int64) throws -> (occurrences: Int64, processed: Int64, issues: Int64) {
        withState { s in
            let rows = s.occurrences.values.filter { $0.row.projectID == projectID }
            let issues = s.issues.values.filter { $0.record.projectID == projectID && $0.record.mergedInto == nil && $0.record.count > 0 }
            return (Int64(rows.count), Int64(rows.filter(\.processed).count), Int64(issues.count))
        }
    }

    public func itemCounts(projectID: Int64) throws -> ItemCounts {
        withState { s in
            var byType: [String: Int64] = [:]
            for item in s.items where item.projectID == projectID { byType[item.type, default: 0] += 1 }
            let sessions = s.sessions[projectID] ?? (0, 0)
            return ItemCounts(byType: byType, sessionsTotal: sessions.total, sessionsCrashed: sessions.crashed)
        }
    }

    /// Runs `body` on a copy of the state and keeps the copy only if `body` returns: one
    /// transaction, as the SQL stores run it.
    public func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T {
        // T need not be Sendable: it leaves the lock through this variable, not as withLock's result.
        nonisolated(unsafe) var result: T?
        try withState { s in
            let editing = InMemoryIssueEditing(state: s)
            result = try body(editing)
            s = editing.state
        }
        return result!
    }

    // MARK: Claims

    public func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        let now = Date().timeIntervalSince1970
        return withState { s in
            if let held = s.claims[name], held.holder != holder, held.expires > now { return false }
            s.claims[name] = (holder, now + duration)
            let shares = s.claims.keys.filter { $0.hasPrefix(ClaimShare.prefix(claim: name)) }
            for share in shares where s.claims[share]!.expires <= now { s.claims[share] = nil }
            return !shares.contains { s.claims[$0] != nil }
        }
    }

    public func acquireSharedClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        let now = Date().timeIntervalSince1970
        return withState { s in
            if let held = s.claims[name], held.expires > now { return false }
            s.claims[ClaimShare.rowName(claim: name, holder: holder)] = (holder, now + duration)
            return true
        }
    }

    public func renewClaim(_ name: String, holder: String, duration: Double) throws -> Bool {
        withState { s in
            guard s.claims[name]?.holder == holder else { return false }
            s.claims[name] = (holder, Date().timeIntervalSince1970 + duration)
            return true
        }
    }

    public func releaseClaim(_ name: String, holder: String) throws {
        withState { s in if s.claims[name]?.holder == holder { s.claims[name] = nil } }
    }
}

public enum InMemoryStoreError: Error, Equatable {
    /// Another project has the slug (the SQL stores refuse it with a unique constraint).
    case duplicateSlug(String)
}
