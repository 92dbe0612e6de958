// The seam for "where might the debug file be?": one type per strategy.
import FaultlineProtocol

/// What is being looked for: a module by build-id and/or path.
public struct DebugFileRequest: Sendable {
    public var buildID: BuildID?
    public var modulePath: String?
}

/// A file a source proposes. The locator checks it (build-id, CRC) before using it.
public struct DebugFileCandidate: Sendable, Equatable {
    public var path: String
    /// Reported as `Location.strategy` when this file is used.
    public var strategy: String
    /// A `.gnu_debuglink` CRC-32 the file must have (it may then lack a build-id).
    public var crc: UInt32?
    public init(path: String, strategy: String, crc: UInt32? = nil) { self.path = path; self.strategy = strategy; self.crc = crc }
}

/// Contract: proposes candidate paths for a module, best first, cheaply (files that do not exist
/// are fine: the locator skips them); never decides whether a file matches.
public protocol DebugFileSource: Sendable {
    func candidates(for request: DebugFileRequest) -> [DebugFileCandidate]
}
