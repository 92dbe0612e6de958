// Files named by the user (`--debug-file`, `--obj`), tried before any search.
import FaultlineProtocol

public struct ExplicitFileSource: DebugFileSource {
    public var files: [String]
    public init(files: [String]) { self.files = files }
    public func candidates(for request: DebugFileRequest) -> [DebugFileCandidate] {
        files.map { DebugFileCandidate(path: $0, strategy: "explicit") }
    }
}
