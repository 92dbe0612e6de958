// `IssueEditing` over a copy of InMemoryStore's state: the primitives the merge policy
// (`IssueMerger`) is written over, with the SQL stores' meaning (SQLIssueEditing), so a merge test
// on the double exercises the same policy the server runs.
@testable import FaultlineServer
import Foundation

final class InMemoryIssueEditing: IssueEditing {
    var state: InMemoryStore.State

    init(state: InMemoryStore.State) { self.state = state }

    func shares(ofStack stackKey: String, projectID: Int64) throws -> [StackShare] {
        var counts: [Int64: Int64] = [:]
        for o in state.occurrences.values where o.stackKey == stackKey && o.row.projectID == projectID {
            guard let stored = o.storedIssue, let live = state.live(stored) else { continue }
            counts[live, default: 0] += 1
        }
        return counts.keys.sorted().map { StackShare(issue: $0, occurrences: counts[$0]!) }
    }

    func issueID(projectID: Int64, fingerprintHash: String) throws -> Int64? {
        state.issues.values.first { $0.record.projectID == projectID && $0.record.fingerprint == fingerprintHash }.map { $0.record.mergedInto ?? $0.record.id }
    }

    func recordedCount(issueID: Int64) throws -> Int64 { state.issues[issueID]?.record.count ?? 0 }

    func createIssue(projectID: Int64, fingerprint f: Fingerprint) throws -> Int64 {
        if let existing = try issueID(projectID: projectID, fingerprintHash: f.hash) {
            state.issues[existing]!.record.title = f.title
            return existing
        }
        let id = state.newID()
        state.issues[id] = InMemoryStore.Issue(
            record: IssueRecord(
                id: id, projectID: projectID, fingerprint: f.hash, title: f.title, culprit: f.culprit, firstSeen: 0, lastSeen: 0, count: 0,
                releases: [], symbolicated: f.symbolicated, mergedInto: nil))
        return id
    }

    func describe(issueID: Int64, as f: Fingerprint, rekey: Bool) throws {
        guard state.issues[issueID] != nil else { return }
        if rekey { state.issues[issueID]!.record.fingerprint = f.hash }
        state.issues[issueID]!.record.title = f.title
        state.issues[issueID]!.record.culprit = f.culprit
        state.issues[issueID]!.record.symbolicated = f.symbolicated
    }

    func moveOccurrences(ofStack stackKey: String, projectID: Int64, to issueID: Int64) throws -> Int64 {
        let members = state.members(issueID)
        var moved: Int64 = 0
        for (id, o) in state.occurrences where o.stackKey == stackKey && o.row.projectID == projectID {
            guard let stored = o.storedIssue, !members.contains(stored) else { continue }
            state.occurrences[id]!.storedIssue = issueID
            moved += 1
        }
        return moved
    }

    func absorb(_ requestedIssue: Int64, into requestedTarget: Int64) throws {
        guard let issue = state.live(requestedIssue), let target = state.live(requestedTarget), issue != target,
            let from = state.issues[issue], let to = state.issues[target]
        else { return }
        var merged = to
        merged.record.count = to.record.count + from.record.count
        if to.record.count == 0 {
            merged.record.firstSeen = from.record.firstSeen
            merged.record.lastSeen = from.record.lastSeen
        } else if from.record.count != 0 {
            merged.record.firstSeen = min(to.record.firstSeen, from.record.firstSeen)
            merged.record.lastSeen = max(to.record.lastSeen, from.record.lastSeen)
        }
        merged.releases.formUnion(from.releases)
        state.issues[target] = merged
        state.issues[issue]!.releases = []
        state.issues[issue]!.record.mergedInto = target
        state.issues[issue]!.record.count = 0
        for (id, other) in state.issues where other.record.mergedInto == issue { state.issues[id]!.record.mergedInto = target }
    }

    func recount(issueID: Int64) throws {
        let members = state.members(issueID)
        state.issues[issueID]?.releases = []
        guard !members.isEmpty else {
            if let live = state.issues[issueID]?.record.mergedInto, live != issueID, !state.members(live).isEmpty { try recount(issueID: live) }
            return
        }
        let rows = state.occurrences.values.filter { $0.storedIssue.map(members.contains) ?? false }
        guard var issue = state.issues[issueID] else { return }
        issue.record.count = Int64(rows.count)
        if let first = rows.map(\.row.timestamp).min() { issue.record.firstSeen = first }
        if let last = rows.map(\.row.timestamp).max() { issue.record.lastSeen = last }
        issue.releases = Set(rows.compactMap(\.row.release))
        state.issues[issueID] = issue
    }
}
