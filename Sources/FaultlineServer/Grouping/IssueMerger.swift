// The issue-merge policy: where a stack's occurrences go when its fingerprint changes (backfill)
// and what happens to the issue they leave. Written over the store's `IssueEditing` primitives, so
// every `Store` (SQLite, PostgreSQL) applies the same rule.
import Foundation

/// Move of every occurrence of one stack to a new fingerprint (backfill).
public struct Regrouping: Sendable {
    public var stackKey: String
    public var projectID: Int64
    public var fingerprint: Fingerprint
    public init(stackKey: String, projectID: Int64, fingerprint: Fingerprint) {
        self.stackKey = stackKey; self.projectID = projectID; self.fingerprint = fingerprint
    }
}

public struct RegroupSummary: Sendable {
    public var occurrencesMoved: Int64 = 0
    public var issuesMerged: Int64 = 0
    public var issuesRenamed: Int64 = 0
    public var merges: [IssueMergeRecord] = []
}

public enum IssueMerger {
    /// Moves each stack's occurrences to the issue of its new fingerprint, in one transaction.
    /// When the stack is all an old issue holds, the old issue either takes the new fingerprint
    /// itself (no issue had it: the id survives unchanged) or is merged into the one that had it
    /// (`absorb`: its id resolves, its occurrences stay where they are and read as the target's,
    /// its count moves by arithmetic). Only a stack that leaves an issue holding other stacks too
    /// moves row by row, and only those issues are recounted. Callers hold the "regrouping"
    /// claim, so recorded counts are exact meanwhile.
    public static func apply(_ moves: [Regrouping], in store: any Store) throws -> RegroupSummary {
        guard !moves.isEmpty else { return RegroupSummary() }
        return try store.editIssues { issues in try apply(moves, issues) }
    }

    static func apply(_ moves: [Regrouping], _ issues: any IssueEditing) throws -> RegroupSummary {
        var summary = RegroupSummary()
        // Occurrences each issue holds, from its recorded count, updated as stacks move: no
        // count over a large issue per stack.
        var remaining: [Int64: Int64] = [:]
        func held(_ id: Int64) throws -> Int64 {
            if let r = remaining[id] { return r }
            let n = try issues.recordedCount(issueID: id)
            remaining[id] = n
            return n
        }
        // Issues whose recorded counts went stale because rows moved in or out of them.
        var stale = Set<Int64>()
        for m in moves {
            let lookup = PhaseClock.start()
            let current = try issues.shares(ofStack: m.stackKey, projectID: m.projectID)
            let target = try issues.issueID(projectID: m.projectID, fingerprintHash: m.fingerprint.hash)
            PhaseClock.end(.regroupLookup, lookup)
            if target == nil, current.count == 1, let only = current.first, try held(only.issue) == only.occurrences {
                // This stack is all the old issue holds: it takes the new fingerprint, same id.
                try issues.describe(issueID: only.issue, as: m.fingerprint, rekey: true)
                summary.issuesRenamed += 1
                continue
            }
            let targetID = try target ?? issues.createIssue(projectID: m.projectID, fingerprint: m.fingerprint)
            try issues.describe(issueID: targetID, as: m.fingerprint, rekey: false)
            var partial: [StackShare] = []
            for old in current where old.issue != targetID {
                guard try held(old.issue) == old.occurrences else { partial.append(old); continue }
                // The stack is all `old` holds: merge the issue, not its rows.
                try PhaseClock.time(.regroupMerge) {
                    if stale.remove(old.issue) != nil { try issues.recount(issueID: old.issue) }
                    try issues.absorb(old.issue, into: targetID)
                }
                remaining[targetID] = try held(targetID) + old.occurrences
                remaining[old.issue] = 0
                summary.occurrencesMoved += old.occurrences
                summary.issuesMerged += 1
                summary.merges.append(IssueMergeRecord(issue: old.issue, into: targetID))
            }
            guard !partial.isEmpty else { continue }
            // The stack leaves issues that hold other stacks too: its rows there move one by one.
            let moved = try PhaseClock.time(.regroupMove) { try issues.moveOccurrences(ofStack: m.stackKey, projectID: m.projectID, to: targetID) }
            summary.occurrencesMoved += moved
            remaining[targetID] = try held(targetID) + moved
            stale.insert(targetID)
            for old in partial {
                remaining[old.issue] = try held(old.issue) - old.occurrences
                stale.insert(old.issue)
            }
        }
        try PhaseClock.time(.regroupRecount, count: stale.count) { for id in stale.sorted() { try issues.recount(issueID: id) } }
        return summary
    }

    /// Empties `source` into `target` (a person merging two issues by hand): `source` resolves to
    /// `target` from then on and its occurrences read as `target`'s, as after a backfill merge.
    public static func merge(_ source: Int64, into target: Int64, in store: any Store) throws {
        try store.editIssues { issues in try issues.absorb(source, into: target) }
    }
}
