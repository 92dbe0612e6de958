// The feature store of the read side (the JSON API, `faultline issues`, the pages, alerts'
// enrichment, health): issue and occurrence lists by page, and counts. The core `Store` keeps the
// single-row lookups ingest and grouping need.
import Foundation

public protocol IssueReads: AnyObject, Sendable {
    /// A project's live issues (not merged away, with occurrences), newest last-seen first.
    func issues(projectID: Int64, limit: Int, offset: Int) throws -> [IssueRecord]
    /// An issue's occurrences, including those of issues merged into it, newest first.
    func occurrences(issueID: Int64, limit: Int, offset: Int) throws -> [StoredOccurrence]
    /// The same, older than the occurrence `before` (a keyset page: arrivals meanwhile shift nothing).
    func occurrences(issueID: Int64, before: Int64, limit: Int) throws -> [StoredOccurrence]
    /// Occurrences stored and grouped, over every project.
    func totals() throws -> (occurrences: Int64, processed: Int64)
    func counts(projectID: Int64) throws -> (occurrences: Int64, processed: Int64, issues: Int64)
    func itemCounts(projectID: Int64) throws -> ItemCounts
}
