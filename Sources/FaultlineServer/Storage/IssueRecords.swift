// Issues and the grouping that feeds them: outcomes, stored stacks, shares, merges. A stack is
// opaque bytes here: grouping encodes and decodes its signature (StackSignature), the store keeps
// the bytes, their key and the build-ids its frames name, and reads nothing inside them.
import Foundation
import FaultlineProtocol

/// Result of symbolicating and grouping one stored occurrence.
public struct GroupingOutcome: Sendable {
    public var occurrenceID: Int64
    public var projectID: Int64
    /// The stack's signature as grouping encoded it and its key (a SHA-1), computed once per
    /// distinct stack by the caller.
    public var stackEncoded: Data
    public var stackKey: String
    /// The build-ids the stack's frames name (`stack_modules`: backfill finds stacks by them).
    public var stackBuildIDs: Set<BuildID>
    public var fingerprint: Fingerprint
    public var timestamp: Double
    public var release: String?
    /// The event's environment (`EventFields.environment`): the pair (environment, stack) is recorded
    /// with the grouping for the web pages' environment filter. nil records none.
    public var environment: String?
    /// The event's tags (`EventFields.tags`): each (tag, stack) is recorded with the grouping, as
    /// the environment is, for the issues search's `key:value` terms.
    public var tags: [EventTag]

    public init(
        occurrenceID: Int64, projectID: Int64, stackEncoded: Data, stackKey: String, stackBuildIDs: Set<BuildID>,
        fingerprint: Fingerprint, timestamp: Double, release: String?, environment: String? = nil, tags: [EventTag] = []
    ) {
        self.occurrenceID = occurrenceID; self.projectID = projectID; self.stackBuildIDs = stackBuildIDs; self.stackEncoded = stackEncoded
        self.stackKey = stackKey; self.fingerprint = fingerprint; self.timestamp = timestamp; self.release = release
        self.environment = environment; self.tags = tags
    }

    /// The distinct (environment, stack key) pairs of `outcomes`, sorted: written in one order on
    /// every node, so two nodes' batches cannot deadlock on them.
    static func environmentPairs(_ outcomes: [GroupingOutcome]) -> [(environment: String, stackKey: String)] {
        Set(outcomes.compactMap { o in o.environment.map { [$0, o.stackKey] } }).sorted { $0.lexicographicallyPrecedes($1) }.map { ($0[0], $0[1]) }
    }

    /// Records a pair in `web_stack_envs` (the same statement on both stores).
    static let environmentPairSQL = "INSERT INTO web_stack_envs(environment, stack_key) VALUES(?, ?) ON CONFLICT DO NOTHING"

    /// The distinct (tag key, value, stack key) triples of `outcomes`, sorted like the environment
    /// pairs and for the same reason.
    static func tagTriples(_ outcomes: [GroupingOutcome]) -> [[String]] {
        Set(outcomes.flatMap { o in o.tags.map { [$0.key, $0.value, o.stackKey] } }).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Records a triple in `web_stack_tags` (the same statement on both stores).
    static let tagTripleSQL = "INSERT INTO web_stack_tags(tag_key, tag_value, stack_key) VALUES(?, ?, ?) ON CONFLICT DO NOTHING"
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

/// An issue that backfill emptied into another (`issues.merged_into`).
public struct IssueMergeRecord: Sendable, Equatable {
    public var issue: Int64
    public var into: Int64
}

/// A stored distinct stack: occurrences point at it; backfill regroups per stack, not per row.
public struct StoredStack: Sendable {
    /// The signature as grouping encoded it (`stacks.signature`).
    public var signature: Data
    public var projectID: Int64
    public var occurrences: Int64
}

/// How many occurrences of one stack one issue holds.
public struct StackShare: Sendable, Equatable {
    public var issue: Int64
    public var occurrences: Int64
    public init(issue: Int64, occurrences: Int64) { self.issue = issue; self.occurrences = occurrences }
}
