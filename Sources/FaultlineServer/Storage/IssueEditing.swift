// The issue primitives a store hands to the merge policy inside one transaction.
import Foundation
import FaultlineProtocol

/// The issue primitives the merge policy (`IssueMerger`, in Grouping/) is written over. A store
/// hands one out for the span of one transaction (`Store.editIssues`): each call sees the earlier
/// calls' writes, and all of them commit together or not at all. No call decides anything: which
/// issue wins, and when one is renamed rather than merged, is the policy's business.
public protocol IssueEditing {
    /// The live issues holding occurrences of the stack in the project, with how many each
    /// (rows naming an issue merged into another count for that other one: `IssueGroups`).
    func shares(ofStack stackKey: String, projectID: Int64) throws -> [StackShare]
    /// The live issue this fingerprint hash groups into, if any: the issue holding it, or the one
    /// that issue was merged into (a merged issue keeps its fingerprint, so a merge sticks).
    func issueID(projectID: Int64, fingerprintHash: String) throws -> Int64?
    /// The occurrence count the issue records (`IssueRecord.count`), without following merges.
    func recordedCount(issueID: Int64) throws -> Int64
    /// A new issue with no occurrences yet (first and last seen are set by `recount` or `absorb`).
    func createIssue(projectID: Int64, fingerprint: Fingerprint) throws -> Int64
    /// Sets the issue's title, culprit and symbolicated flag; with `rekey`, its fingerprint hash too.
    func describe(issueID: Int64, as fingerprint: Fingerprint, rekey: Bool) throws
    /// Points every grouped occurrence of the stack that is not already `issueID`'s at it (row by
    /// row: for a stack that leaves an issue holding other stacks); returns how many changed issue.
    /// The counts of the issues involved are stale until `recount`.
    func moveOccurrences(ofStack stackKey: String, projectID: Int64, to issueID: Int64) throws -> Int64
    /// Merges `issue` into `target` without touching an occurrence: `target` gains its recorded
    /// count, first/last seen and releases; `issue` gives up its count, keeps its id (reads follow
    /// `mergedInto`), its rows, which from now on read as `target`'s, and its fingerprint, whose
    /// later occurrences grouping counts into `target`; issues
    /// merged into it earlier now point at `target`. `issue`'s recorded count must be exact.
    func absorb(_ issue: Int64, into target: Int64) throws
    /// Count, first/last seen and releases from the occurrences the issue holds now.
    func recount(issueID: Int64) throws
}
