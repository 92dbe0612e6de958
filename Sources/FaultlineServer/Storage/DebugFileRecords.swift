// Uploaded debug files, their bundled sources, and the backfill runs an upload starts.
import Foundation
import FaultlineProtocol

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
