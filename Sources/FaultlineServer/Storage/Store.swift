// The core storage seam: looking projects, keys and tokens up, ingest, grouping's issue edits and
// claims, which the ingest and grouping path and every authenticated request use. Features keep
// their own stores beside it (`Stores`: project administration, issue reads, debug files,
// backfills, retention, install windows, traces, log archives, attachments), so a part names only
// what it uses and a new feature adds a protocol instead of growing this one. SQLiteStore (one
// node) and PostgresStore (several nodes on one database) implement all of them.
import Foundation
import FaultlineProtocol

public protocol Store: AnyObject, Sendable {
    /// Finishes pending writes and releases the database; the store is not used afterwards.
    func close()

    // Projects, keys and tokens, looked up (creating and changing them: ProjectAdministrationStore)
    func projects() throws -> [ProjectRecord]
    func project(idOrSlug: String) throws -> ProjectRecord?
    func publicKey(_ key: String) throws -> PublicKeyRecord?
    func isServerToken(_ token: String) throws -> Bool

    // Ingest: returns only after the data is committed.
    func storeIngest(event: IncomingEvent?, items: [IncomingItem]) throws -> Int64?
    func unprocessedOccurrences(limit: Int) throws -> [StoredOccurrence]
    func recordGrouping(_ outcomes: [GroupingOutcome]) throws

    // Issues and occurrences, one at a time (lists and counts: IssueReads)
    /// Follows `mergedInto`, so an id that backfill merged away still resolves.
    func issue(id: Int64) throws -> IssueRecord?
    func occurrence(projectID: Int64, eventID: String) throws -> StoredOccurrence?
    func occurrence(id: Int64) throws -> StoredOccurrence?
    /// Runs `body` in one transaction over the issue primitives (see `IssueEditing`); returns
    /// once it is committed. (Escaping: a store may run it on its writer thread.)
    func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T

    // Claims: a named exclusion held in the store, so it holds across server nodes that share one
    // database (backfill takes "regrouping", every node's grouping a share of it; see `StoreClaim`).
    // A claim has one holder (or several sharing holders) and an expiry: a holder that dies loses
    // it when its lease runs out. Holders are opaque strings, unique per claimant (two claimants in
    // one process use two holders).

    /// Takes the claim for `holder` for `duration` seconds if it is free, expired or already
    /// `holder`'s (then it is extended). Returns whether `holder` holds it now, which also needs
    /// every share of it (`acquireSharedClaim`) released or expired: a holder that took the claim
    /// while shares remain keeps it, so no new share is granted, and is answered false until they
    /// are gone (it asks again; a waiting exclusive claimant is not starved by a stream of shares).
    /// Expired shares are deleted as the claim is taken, so their holders cannot renew them.
    func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool
    /// Takes a share of the claim for `holder` for `duration` seconds: any number of holders
    /// share it at once, none while an exclusive holder has it or waits for it (`acquireClaim`).
    /// Returns whether `holder` holds a share now. The share is renewed and released with
    /// `renewClaim` / `releaseClaim` under its row name, `ClaimShare.rowName(claim:holder:)`.
    func acquireSharedClaim(_ name: String, holder: String, duration: Double) throws -> Bool
    /// Extends `holder`'s claim by `duration` seconds from now; false when the claim is not (or no
    /// longer) `holder`'s, i.e. it expired and another holder took it.
    func renewClaim(_ name: String, holder: String, duration: Double) throws -> Bool
    /// Gives the claim up if `holder` holds it; otherwise does nothing.
    func releaseClaim(_ name: String, holder: String) throws
}
