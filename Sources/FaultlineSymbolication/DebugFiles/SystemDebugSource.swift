// The distribution's debug packages: `/usr/lib/debug/.build-id/xx/rest.debug`.
import FaultlineProtocol

public struct SystemDebugSource: DebugFileSource {
    public static let defaultRoot = "/usr/lib/debug"
    /// Root of the system debug tree; tests point it elsewhere.
    public var root: String
    public init(root: String = SystemDebugSource.defaultRoot) { self.root = root }
    public func candidates(for request: DebugFileRequest) -> [DebugFileCandidate] {
        guard let buildID = request.buildID else { return [] }
        let (dir, rest) = buildID.buildIDPathComponents
        return [DebugFileCandidate(path: "\(root)/.build-id/\(dir)/\(rest).debug", strategy: "system")]
    }
}
