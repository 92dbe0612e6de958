// Debug directories in the `.build-id/xx/rest.debug` layout (also `rest`, for executables, and the
import FaultlineProtocol
// same layout when the directory *is* the `.build-id` folder). The server's store is one.

public struct BuildIDDirectorySource: DebugFileSource {
    public var directories: [String]
    public init(directories: [String]) { self.directories = directories }
    public func candidates(for request: DebugFileRequest) -> [DebugFileCandidate] {
        guard let buildID = request.buildID else { return [] }
        let (dir, rest) = buildID.buildIDPathComponents
        return directories.flatMap { d in
            var paths = ["\(d)/.build-id/\(dir)/\(rest).debug", "\(d)/.build-id/\(dir)/\(rest)"]
            if d.hasSuffix(".build-id") || d.hasSuffix(".build-id/") { paths += ["\(d)/\(dir)/\(rest).debug", "\(d)/\(dir)/\(rest)"] }
            return paths.map { DebugFileCandidate(path: $0, strategy: "debug-dir") }
        }
    }
}
