// The storage seam: everything the server persists goes through `Store`. SQLiteStore (one node)
// and PostgresStore (several nodes on one database) implement it.
import Foundation
import FaultlineProtocol

public struct ProjectRecord: Sendable, Equatable {
    public let id: Int64
    public let slug: String
    public let name: String
}

public struct PublicKeyRecord: Sendable, Equatable {
    public let key: PublicKey
    public let projectID: Int64
    /// Application ids allowed to send with this key; empty means any.
    public let allowedAppIDs: [String]
}

/// An event as stored at ingest, before symbolication and grouping.
public struct IncomingEvent: Sendable {
    public var projectID: Int64
    public var eventID: String
    public var received: Double
    public var timestamp: Double
    public var release: String?
    public var installID: String?
    /// The event JSON, deflate-compressed (see `EventCompression`).
    public var compressedEvent: Data
}

/// A non-event envelope item we keep and count (sessions, logs, client reports).
public struct IncomingItem: Sendable {
    public var projectID: Int64
    public var type: String
    public var received: Double
    public var payload: Data
    /// Sessions this item starts and reports crashed (for the crash-free rate).
    public var sessionsStarted: Int64 = 0
    public var sessionsCrashed: Int64 = 0
}

/// Result of symbolicating and grouping one stored occurrence.
public struct GroupingOutcome: Sendable {
    public var occurrenceID: Int64
    public var projectID: Int64
    public var stack: StackSignature
    /// `stack.encoded` and its SHA-1, computed once per distinct stack by the caller.
    public var stackEncoded: Data
    public var stackKey: String
    public var fingerprint: Fingerprint
    public var timestamp: Double
    public var release: String?

    public init(occurrenceID: Int64, projectID: Int64, stack: StackSignature, stackEncoded: Data, stackKey: String,
                fingerprint: Fingerprint, timestamp: Double, release: String?) {
        self.occurrenceID = occurrenceID; self.projectID = projectID; self.stack = stack; self.stackEncoded = stackEncoded
        self.stackKey = stackKey; self.fingerprint = fingerprint; self.timestamp = timestamp; self.release = release
    }
}

public struct StoredOccurrence: Sendable {
    public var id: Int64
    public var projectID: Int64
    public var eventID: String
    public var received: Double
    public var timestamp: Double
    public var release: String?
    public var issueID: Int64?
    public var compressedEvent: Data
}

public struct IssueRecord: Sendable {
    public var id: Int64
    public var projectID: Int64
    public var fingerprint: String
    public var title: String
    public var culprit: String
    public var firstSeen: Double
    public var lastSeen: Double
    public var count: Int64
    public var releases: [String]
    public var symbolicated: Bool
    /// Set when this issue was merged into another by backfill; reads follow it.
    public var mergedInto: Int64?
}

public struct DebugFileRecord: Sendable {
    public var buildID: BuildID
    public var hasDebugInfo: Bool
    public var hasSymbols: Bool
    public var isExecutable: Bool
    public var size: Int64
    public var name: String
    public var uploaded: Double
}

public struct BackfillRecord: Sendable {
    public var id: Int64
    public var buildID: BuildID
    public var state: String
    public var stacks: Int64
    public var occurrences: Int64
    public var occurrencesDone: Int64
    public var addressesSymbolicated: Int64
    public var issuesMerged: Int64
    public var started: Double
    public var finished: Double?
    /// Occurrences whose stack resolves through the new file after this run (`upload --wait`).
    public var occurrencesSymbolicated: Int64 = 0
    /// Issues this run emptied into another, in the order they were merged.
    public var merges: [IssueMergeRecord] = []
    /// Why the run failed (`state == "failed"`).
    public var error: String?
}

/// A source file bundled with a debug file (`upload --include-sources`): the path its DWARF
/// names, and the SHA-1 of the contents (stored once per content, shared between builds).
public struct SourceFileRecord: Sendable, Equatable {
    public var path: String
    public var sha1: String
    public var size: Int64
    public init(path: String, sha1: String, size: Int64) { self.path = path; self.sha1 = sha1; self.size = size }
}

/// An issue that backfill emptied into another (`issues.merged_into`).
public struct IssueMergeRecord: Sendable, Equatable {
    public var issue: Int64
    public var into: Int64
}

public struct ItemCounts: Sendable {
    public var byType: [String: Int64]
    public var sessionsTotal: Int64
    public var sessionsCrashed: Int64
}

/// A stored distinct stack: occurrences point at it; backfill regroups per stack, not per row.
public struct StoredStack: Sendable {
    public var signature: StackSignature
    public var projectID: Int64
    public var occurrences: Int64
}

/// How many occurrences of one stack one issue holds.
public struct StackShare: Sendable, Equatable {
    public var issue: Int64
    public var occurrences: Int64
    public init(issue: Int64, occurrences: Int64) { self.issue = issue; self.occurrences = occurrences }
}

/// The issue primitives the merge policy (`IssueMerger`, in Grouping/) is written over. A store
/// hands one out for the span of one transaction (`Store.editIssues`): each call sees the earlier
/// calls' writes, and all of them commit together or not at all. No call decides anything: which
/// issue wins, and when one is renamed rather than merged, is the policy's business.
public protocol IssueEditing {
    /// The issues holding occurrences of the stack in the project, with how many each.
    func shares(ofStack stackKey: String, projectID: Int64) throws -> [StackShare]
    /// The live issue with this fingerprint hash, if any (merged issues have given theirs up).
    func issueID(projectID: Int64, fingerprintHash: String) throws -> Int64?
    /// The occurrence count the issue records (`IssueRecord.count`), without following merges.
    func recordedCount(issueID: Int64) throws -> Int64
    /// A new issue with no occurrences yet (first and last seen are set by `recount`).
    func createIssue(projectID: Int64, fingerprint: Fingerprint) throws -> Int64
    /// Sets the issue's title, culprit and symbolicated flag; with `rekey`, its fingerprint hash too.
    func describe(issueID: Int64, as fingerprint: Fingerprint, rekey: Bool) throws
    /// Points every grouped occurrence of the stack at `issueID`; returns how many changed issue.
    func moveOccurrences(ofStack stackKey: String, projectID: Int64, to issueID: Int64) throws -> Int64
    /// Points every occurrence of `source` at `target`; returns how many moved.
    func moveOccurrences(ofIssue source: Int64, to target: Int64) throws -> Int64
    /// Marks `issue` merged into `target`: it gives up its fingerprint and count, keeps its id
    /// (reads follow `mergedInto`), and issues merged into it earlier now point at `target`.
    func markMerged(_ issue: Int64, into target: Int64) throws
    /// Count, first/last seen and releases from the occurrences the issue holds now.
    func recount(issueID: Int64) throws
}

public protocol Store: AnyObject, Sendable, BackfillJobs, RetentionStore, InstallWindows {
    /// Finishes pending writes and releases the database; the store is not used afterwards.
    func close()

    // Projects and keys
    func createProject(slug: String, name: String) throws -> ProjectRecord
    func projects() throws -> [ProjectRecord]
    func project(idOrSlug: String) throws -> ProjectRecord?
    func createPublicKey(projectID: Int64, allowedAppIDs: [String]) throws -> PublicKeyRecord
    func publicKeys(projectID: Int64?) throws -> [PublicKeyRecord]
    func publicKey(_ key: String) throws -> PublicKeyRecord?
    /// Creates a server token; only its hash is stored, so the value is shown once.
    func createServerToken(name: String) throws -> String
    func isServerToken(_ token: String) throws -> Bool

    // Ingest: returns only after the data is committed.
    func storeIngest(event: IncomingEvent?, items: [IncomingItem]) throws -> Int64?
    func unprocessedOccurrences(limit: Int) throws -> [StoredOccurrence]
    func recordGrouping(_ outcomes: [GroupingOutcome]) throws

    // Reading
    func issues(projectID: Int64, limit: Int, offset: Int) throws -> [IssueRecord]
    /// Follows `mergedInto`, so an id that backfill merged away still resolves.
    func issue(id: Int64) throws -> IssueRecord?
    func occurrences(issueID: Int64, limit: Int, offset: Int) throws -> [StoredOccurrence]
    func occurrence(projectID: Int64, eventID: String) throws -> StoredOccurrence?
    func occurrence(id: Int64) throws -> StoredOccurrence?
    /// Occurrences stored and grouped, over every project.
    func totals() throws -> (occurrences: Int64, processed: Int64)
    func counts(projectID: Int64) throws -> (occurrences: Int64, processed: Int64, issues: Int64)
    func itemCounts(projectID: Int64) throws -> ItemCounts

    // Debug files and backfill
    func recordDebugFile(_ record: DebugFileRecord) throws
    func debugFile(buildID: BuildID) throws -> DebugFileRecord?
    func debugFiles() throws -> [DebugFileRecord]
    /// Whole-file SHA-1 of an assembled upload → its build-id (existence probes of sentry-cli).
    func recordUpload(checksum: String, buildID: BuildID) throws
    func uploadedBuildID(checksum: String) throws -> BuildID?
    func stacks(referencing buildID: BuildID) throws -> [StoredStack]
    /// Runs `body` in one transaction over the issue primitives (see `IssueEditing`); returns
    /// once it is committed. (Escaping: a store may run it on its writer thread.)
    func editIssues<T>(_ body: @escaping (any IssueEditing) throws -> T) throws -> T
    func createBackfill(buildID: BuildID) throws -> Int64
    func updateBackfill(_ record: BackfillRecord) throws
    func backfills(limit: Int) throws -> [BackfillRecord]
    /// The most recent backfill of a build-id (what `upload --wait` reports), nil if none ran.
    func latestBackfill(buildID: BuildID) throws -> BackfillRecord?

    // Claims: a named exclusion held in the store, so it holds across server nodes that share one
    // database (grouping and backfill take "regrouping"; see `StoreClaim`). A claim has one holder
    // and an expiry: a holder that dies loses it when its lease runs out. Holders are opaque
    // strings, unique per claimant (two claimants in one process use two holders).

    /// Takes the claim for `holder` for `duration` seconds if it is free, expired or already
    /// `holder`'s (then it is extended). Returns whether `holder` holds it now.
    func acquireClaim(_ name: String, holder: String, duration: Double) throws -> Bool
    /// Extends `holder`'s claim by `duration` seconds from now; false when the claim is not (or no
    /// longer) `holder`'s, i.e. it expired and another holder took it.
    func renewClaim(_ name: String, holder: String, duration: Double) throws -> Bool
    /// Gives the claim up if `holder` holds it; otherwise does nothing.
    func releaseClaim(_ name: String, holder: String) throws

    // Source files of debug files (debuginfod /source)
    func recordSourceFiles(buildID: BuildID, _ files: [SourceFileRecord]) throws
    func sourceFile(buildID: BuildID, path: String) throws -> SourceFileRecord?
}
