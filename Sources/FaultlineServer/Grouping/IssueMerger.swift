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
    /// When the old issue loses all its occurrences it either takes the new fingerprint itself (no
    /// issue had it: the id survives unchanged) or is marked merged into the one that had it (its
    /// id resolves). Callers hold the "regrouping" claim, so issue counts are exact meanwhile.
    public static func apply(_ moves: [Regrouping], in store: any Store) throws -> RegroupSummary {
        guard !moves.isEmpty else { return RegroupSummary() }
        return try store.editIssues { issues in try apply(moves, issues) }
    }

    static func apply(_ moves: [Regrouping], _ issues: any IssueEditing) throws -> RegroupSummary {
        var summary = RegroupSummary()
        var touched = Set<Int64>()
        // Occurrences each issue holds, from its recorded count, updated as stacks move: no
        // count over a large issue per stack.
        var remaining: [Int64: Int64] = [:]
        func held(_ id: Int64) throws -> Int64 {
            if let r = remaining[id] { return r }
            let n = try issues.recordedCount(issueID: id)
            remaining[id] = n
            return n
        }
        for m in moves {
            let lookup = PhaseClock.start()
            let current = try issues.shares(ofStack: m.stackKey, projectID: m.projectID)
            let target = try issues.issueID(projectID: m.projectID, fingerprintHash: m.fingerprint.hash)
            PhaseClock.end(.regroupLookup, lookup)
            if target == nil, current.count == 1, let only = current.first, try held(only.issue) == only.occurrences {
                // This stack is all the old issue holds: it takes the new fingerprint, same id.
                try issues.describe(issueID: only.issue, as: m.fingerprint, rekey: true)
                summary.issuesRenamed += 1
                touched.insert(only.issue)
                continue
            }
            let targetID = try target ?? issues.createIssue(projectID: m.projectID, fingerprint: m.fingerprint)
            try issues.describe(issueID: targetID, as: m.fingerprint, rekey: false)
            let moved = try PhaseClock.time(.regroupMove) { try issues.moveOccurrences(ofStack: m.stackKey, projectID: m.projectID, to: targetID) }
            summary.occurrencesMoved += moved
            remaining[targetID] = try held(targetID) + moved
            touched.insert(targetID)
            for old in current where old.issue != targetID {
                touched.insert(old.issue)
                let left = try held(old.issue) - old.occurrences
                remaining[old.issue] = left
                if left <= 0 {
                    try issues.markMerged(old.issue, into: targetID)
                    summary.issuesMerged += 1
                    summary.merges.append(IssueMergeRecord(issue: old.issue, into: targetID))
                }
            }
        }
        try PhaseClock.time(.regroupRecount, count: touched.count) { for id in touched { try issues.recount(issueID: id) } }
        return summary
    }

    /// Empties `source` into `target` (a person merging two issues by hand): every occurrence
    /// moves and `source` resolves to `target` from then on, as after a backfill merge.
    public static func merge(_ source: Int64, into target: Int64, in store: any Store) throws {
        try store.editIssues { issues in
            _ = try issues.moveOccurrences(ofIssue: source, to: target)
            try issues.markMerged(source, into: target)
            try issues.recount(issueID: source)
            try issues.recount(issueID: target)
        }
    }
}
