// The module's own file, for binaries that were not stripped. Never used on the server, where the
import FaultlineProtocol
// path comes from a client.

public struct ModulePathSource: DebugFileSource {
    public init() {}
    public func candidates(for request: DebugFileRequest) -> [DebugFileCandidate] {
        request.modulePath.map { [DebugFileCandidate(path: $0, strategy: "module")] } ?? []
    }
}
